// A Store opened on a thread of its own, so that a process can do other work
// (telic serve: answer `initialize`) while the ledger opens and migrates.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "store/store_wrapper.h"

namespace telic::store {

// Construction returns at once and runs `open` on a new thread. Every Store
// call waits until `open` has returned, then forwards to the store it opened;
// when `open` failed, every call returns that error (nothing is retried).
// Calls may come from any thread, as the opened store allows.
class BackgroundOpenedStore final : public StoreWrapper {
 public:
  using Opener = std::function<Result<std::unique_ptr<Store>>()>;
  explicit BackgroundOpenedStore(Opener open);
  // Joins the opening thread (waits for `open` to return).
  ~BackgroundOpenedStore() override;
  BackgroundOpenedStore(const BackgroundOpenedStore&) = delete;
  BackgroundOpenedStore& operator=(const BackgroundOpenedStore&) = delete;

  // Waits for `open`; the store it opened, or its error.
  Result<Store*> Opened();
  // Whether `open` has returned (never waits).
  bool finished() const { return finished_.load(std::memory_order_acquire); }

 protected:
  // Opened(): every forwarded call waits for the store, or returns its error.
  Result<Store*> Target() override { return Opened(); }

 private:
  void Finish(Result<std::unique_ptr<Store>> opened);

  std::mutex mutex_;
  std::condition_variable finished_changed_;
  std::atomic<bool> finished_{false};
  // Set once, before finished_; read without the mutex after finished_.
  std::unique_ptr<Store> store_;
  std::optional<Error> error_;
  std::thread thread_;  // last: started after every member above exists
};

}  // namespace telic::store
