#include "store/background_open.h"

#include <exception>
#include <utility>

namespace telic::store {

BackgroundOpenedStore::BackgroundOpenedStore(Opener open)
    : thread_([this, open = std::move(open)] {
        Result<std::unique_ptr<Store>> opened = std::unexpected(Error(ErrorCode::kInternal, "the store was not opened"));
        try {
          opened = open();
        } catch (const std::exception& ex) {
          opened = std::unexpected(Error(ErrorCode::kInternal, std::string("opening the store failed: ") + ex.what()));
        }
        Finish(std::move(opened));
      }) {}

BackgroundOpenedStore::~BackgroundOpenedStore() {
  if (thread_.joinable()) thread_.join();
}

void BackgroundOpenedStore::Finish(Result<std::unique_ptr<Store>> opened) {
  std::lock_guard lock(mutex_);
  if (opened && *opened) {
    store_ = std::move(*opened);
  } else {
    error_ = opened ? Error(ErrorCode::kInternal, "the store opener returned no store") : opened.error();
  }
  finished_.store(true, std::memory_order_release);
  finished_changed_.notify_all();
}

Result<Store*> BackgroundOpenedStore::Opened() {
  if (!finished_.load(std::memory_order_acquire)) {
    std::unique_lock lock(mutex_);
    finished_changed_.wait(lock, [this] { return finished_.load(std::memory_order_acquire); });
  }
  if (error_) return std::unexpected(*error_);
  return store_.get();
}

}  // namespace telic::store
