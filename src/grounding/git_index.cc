#include "grounding/git_index.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <system_error>

#include <nettle/sha1.h>

namespace telic::grounding {
namespace {

constexpr size_t kHeaderBytes = 12;
constexpr size_t kChecksumBytes = 20;
constexpr size_t kStatBytes = 40;       // ctime mtime dev ino mode uid gid size
constexpr size_t kEntryHeaderBytes = 62;  // stat data, object id, flags
constexpr uint16_t kAssumeValidFlag = 0x8000;
constexpr uint16_t kExtendedFlag = 0x4000;
// v4 paths are rebuilt in memory; a hostile file could make them grow with
// the square of its entry count. Real indexes stay far below this.
constexpr size_t kMaxPathBytes = 64 * 1024;
constexpr size_t kMaxArenaFactor = 64;
constexpr uint16_t kSkipWorktreeFlag = 0x4000;  // in the v3 extended flags
constexpr uint16_t kIntentToAddFlag = 0x2000;

uint32_t Be32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | uint32_t{u[3]};
}

uint16_t Be16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>((u[0] << 8) | u[1]);
}

std::unexpected<Error> Corrupt(const std::string& what) {
  return Fail(ErrorCode::kDataLoss, "The Git index is damaged: " + what + ".");
}

std::unexpected<Error> Unsupported(const std::string& what) {
  return Fail(ErrorCode::kFailedPrecondition, "The Git index uses " + what + ", which this reader does not handle.");
}

// Git's offset varint (v4 path prefixes): 7 bits per byte, each
// continuation adding one before the shift. False when it runs past `end`.
bool DecodeVarint(const char*& p, const char* end, size_t& value) {
  if (p >= end) return false;
  auto c = static_cast<unsigned char>(*p++);
  value = c & 0x7f;
  while (c & 0x80) {
    if (p >= end || value > (SIZE_MAX >> 8)) return false;
    c = static_cast<unsigned char>(*p++);
    value = ((value + 1) << 7) | (c & 0x7f);
  }
  return true;
}

// A non-negative decimal up to `stop`, or -1 for "-1" (an invalidated
// cache-tree node). nullopt when malformed.
std::optional<long> ParseCount(std::string_view& data, char stop) {
  size_t at = data.find(stop);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::string_view digits = data.substr(0, at);
  data.remove_prefix(at + 1);
  if (digits == "-1") return -1;
  long value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || value > 1'000'000'000) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

Result<IndexFile> IndexFile::Read(const std::string& path) {
  IndexFile index;
  // Non-blocking: a FIFO planted at the index path must not hang grounding.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return index;
    return Fail(ErrorCode::kUnavailable, "The Git index could not be opened: " + std::string(std::strerror(errno)));
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return Fail(ErrorCode::kUnavailable, "The Git index could not be read (not a regular file).");
  }
  if (info.st_size > 0) {
    auto size = static_cast<size_t>(info.st_size);
    void* address = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (address == MAP_FAILED) {
      close(fd);
      return Fail(ErrorCode::kUnavailable, "The Git index could not be mapped.");
    }
    index.map_ = std::unique_ptr<const char, IndexUnmap>(static_cast<const char*>(address), IndexUnmap{size});
    index.bytes_ = std::string_view(index.map_.get(), size);
  }
  close(fd);
  index.mtime_ = {static_cast<uint32_t>(info.st_mtim.tv_sec), static_cast<uint32_t>(info.st_mtim.tv_nsec)};
  if (auto parsed = index.Parse(); !parsed) return std::unexpected(parsed.error());
  return index;
}

Result<IndexFile> IndexFile::FromBytes(std::string_view bytes) {
  IndexFile index;
  index.owned_.assign(bytes.begin(), bytes.end());
  index.bytes_ = std::string_view(index.owned_.data(), index.owned_.size());
  if (auto parsed = index.Parse(); !parsed) return std::unexpected(parsed.error());
  return index;
}

void IndexUnmap::operator()(const char* address) const { munmap(const_cast<char*>(address), size); }

Status IndexFile::Parse() {
  if (bytes_.size() < kHeaderBytes + kChecksumBytes) return Corrupt("it is shorter than its header");
  if (bytes_.size() > UINT32_MAX) return Unsupported("a size over 4 GiB");
  if (std::memcmp(bytes_.data(), "DIRC", 4) != 0) return Corrupt("its signature is not DIRC");
  version_ = Be32(bytes_.data() + 4);
  if (version_ < 2 || version_ > 4) return Unsupported("version " + std::to_string(version_));
  const size_t end = bytes_.size() - kChecksumBytes;
  // index.skipHash writes a zero checksum; anything else must match. The
  // SHA-1 runs beside the parse (both only read the bytes); a mismatch is
  // reported before any structural error.
  static const char kZero[kChecksumBytes] = {};
  const bool verify = std::memcmp(bytes_.data() + end, kZero, kChecksumBytes) != 0;
  auto checksum_matches = [this, end] {
    sha1_ctx context;
    sha1_init(&context);
    sha1_update(&context, end, reinterpret_cast<const uint8_t*>(bytes_.data()));
    uint8_t digest[SHA1_DIGEST_SIZE];
    sha1_digest(&context, sizeof digest, digest);
    static_assert(SHA1_DIGEST_SIZE == kChecksumBytes);
    return std::memcmp(digest, bytes_.data() + end, kChecksumBytes) == 0;
  };
  std::future<bool> checksum;
  if (verify) {
    try {
      checksum = std::async(std::launch::async, checksum_matches);
    } catch (const std::system_error&) {
      // no thread: checked below on this one
    }
  }
  Status parsed = ParseStructure(end);
  if (verify && !(checksum.valid() ? checksum.get() : checksum_matches())) return Corrupt("its checksum does not match");
  return parsed;
}

Status IndexFile::ParseStructure(size_t end) {
  size_t offset = kHeaderBytes;
  if (auto parsed = ParseEntries(offset, end); !parsed) return parsed;
  if (auto parsed = ParseExtensions(offset, end); !parsed) return parsed;
  if (empty_path_) return Corrupt("entry " + std::to_string(*empty_path_) + " has an empty path");
  return Ok();
}

Status IndexFile::ParseEntries(size_t& offset, size_t end) {
  uint32_t count = Be32(bytes_.data() + 8);
  if (count > (end - offset) / kEntryHeaderBytes) return Corrupt("it claims more entries than it holds");
  slots_.reserve(count);
  std::string previous;  // v4: the path before
  const char* limit = bytes_.data() + end;
  for (uint32_t i = 0; i < count; ++i) {
    if (end - offset < kEntryHeaderBytes) return Corrupt("entry " + std::to_string(i) + " is cut short");
    const char* p = bytes_.data() + offset;
    uint16_t flags = Be16(p + 60);
    conflicts_ = conflicts_ || ((flags >> 12) & 3) != 0;
    size_t header = kEntryHeaderBytes;
    if (flags & kExtendedFlag) {
      if (version_ < 3) return Corrupt("entry " + std::to_string(i) + " has extended flags in a version 2 index");
      if (end - offset < header + 2) return Corrupt("entry " + std::to_string(i) + " is cut short");
      header += 2;
    }
    Slot slot;
    slot.record = static_cast<uint32_t>(offset);
    const char* name = p + header;
    if (version_ == 4) {
      size_t strip = 0;
      if (!DecodeVarint(name, limit, strip) || strip > previous.size()) {
        return Corrupt("entry " + std::to_string(i) + " has a bad path prefix");
      }
      const char* nul = static_cast<const char*>(std::memchr(name, '\0', static_cast<size_t>(limit - name)));
      if (nul == nullptr) return Corrupt("entry " + std::to_string(i) + " has an unterminated path");
      previous.resize(previous.size() - strip);
      previous.append(name, nul);
      if (previous.size() > kMaxPathBytes || arena_.size() + previous.size() > kMaxArenaFactor * bytes_.size()) {
        return Corrupt("entry " + std::to_string(i) + " expands to paths far longer than the file");
      }
      slot.path = static_cast<uint32_t>(arena_.size());
      slot.length = static_cast<uint32_t>(previous.size());
      arena_.insert(arena_.end(), previous.begin(), previous.end());
      offset = static_cast<size_t>(nul + 1 - bytes_.data());
    } else {
      const char* nul = static_cast<const char*>(std::memchr(name, '\0', static_cast<size_t>(limit - name)));
      if (nul == nullptr) return Corrupt("entry " + std::to_string(i) + " has an unterminated path");
      slot.path = static_cast<uint32_t>(name - bytes_.data());
      slot.length = static_cast<uint32_t>(nul - name);
      // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
      size_t padded = (header + slot.length + 8) & ~size_t{7};
      if (end - offset < padded) return Corrupt("entry " + std::to_string(i) + " is cut short");
      offset += padded;
    }
    // Split indexes hold nameless entries; the `link` extension, read
    // next, decides whether that is unsupported or damage.
    if (slot.length == 0 && !empty_path_) empty_path_ = i;
    slots_.push_back(slot);
  }
  path_base_ = version_ == 4 ? arena_.data() : bytes_.data();
  for (size_t i = 1; i < slots_.size() && sorted_; ++i) sorted_ = path(i - 1) <= path(i);
  return Ok();
}

IndexEntry IndexFile::entry(size_t i) const {
  if (!decoded_.empty()) return decoded_[i];
  const char* p = bytes_.data() + slots_[i].record;
  IndexEntry entry;
  entry.path = path(i);
  entry.ctime = {Be32(p), Be32(p + 4)};
  entry.mtime = {Be32(p + 8), Be32(p + 12)};
  entry.dev = Be32(p + 16);
  entry.ino = Be32(p + 20);
  entry.mode = Be32(p + 24);
  entry.uid = Be32(p + 28);
  entry.gid = Be32(p + 32);
  entry.size = Be32(p + 36);
  std::memcpy(entry.id.data(), p + kStatBytes, entry.id.size());
  uint16_t flags = Be16(p + 60);
  entry.stage = static_cast<uint8_t>((flags >> 12) & 3);
  entry.assume_unchanged = (flags & kAssumeValidFlag) != 0;
  if (flags & kExtendedFlag) {
    uint16_t extended = Be16(p + kEntryHeaderBytes);
    entry.skip_worktree = (extended & kSkipWorktreeFlag) != 0;
    entry.intent_to_add = (extended & kIntentToAddFlag) != 0;
  }
  return entry;
}

IndexFile IndexFile::FromEntries(const std::vector<IndexEntry>& entries, IndexTime mtime) {
  IndexFile index;
  index.mtime_ = mtime;
  size_t total = 0;
  for (const IndexEntry& entry : entries) total += entry.path.size();
  index.arena_.reserve(total);
  index.slots_.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const IndexEntry& entry = entries[i];
    index.slots_.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(index.arena_.size()),
                            static_cast<uint32_t>(entry.path.size())});
    index.arena_.insert(index.arena_.end(), entry.path.begin(), entry.path.end());
    index.conflicts_ = index.conflicts_ || entry.stage != 0;
  }
  index.path_base_ = index.arena_.data();
  index.decoded_ = entries;
  for (size_t i = 0; i < entries.size(); ++i) index.decoded_[i].path = index.path(i);
  for (size_t i = 1; i < index.slots_.size() && index.sorted_; ++i) index.sorted_ = index.path(i - 1) <= index.path(i);
  return index;
}

Status IndexFile::ParseExtensions(size_t offset, size_t end) {
  while (offset < end) {
    if (end - offset < 8) return Corrupt("an extension header is cut short");
    std::string_view signature(bytes_.data() + offset, 4);
    uint32_t size = Be32(bytes_.data() + offset + 4);
    if (size > end - offset - 8) return Corrupt("extension " + std::string(signature) + " is cut short");
    std::string_view data(bytes_.data() + offset + 8, size);
    if (signature == "TREE") {
      ParseCacheTree(data);
    } else if (signature[0] < 'A' || signature[0] > 'Z') {
      // Lower case: required for a correct reading (split or sparse index).
      return Unsupported("the required extension '" + std::string(signature) + "'");
    }
    offset += 8 + size;
  }
  return Ok();
}

// The root node only: "" NUL, entry count, ' ', subtree count, '\n', and
// the tree id when the count is not -1. A malformed node counts as absent.
void IndexFile::ParseCacheTree(std::string_view data) {
  if (data.empty() || data[0] != '\0') return;
  data.remove_prefix(1);
  auto entries = ParseCount(data, ' ');
  auto subtrees = ParseCount(data, '\n');
  if (!entries || !subtrees || *entries < 0 || data.size() < ObjectId{}.size()) return;
  if (static_cast<size_t>(*entries) != slots_.size()) return;
  ObjectId id;
  std::memcpy(id.data(), data.data(), id.size());
  cache_tree_root_ = id;
}

}  // namespace telic::grounding
