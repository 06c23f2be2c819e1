// Background jobs for the GUI: a Job runs one function on its own thread and
// publishes an immutable result; the UI thread polls done() each frame and
// never waits. Progress and a cancel flag are shared with the function.
#ifndef PASSLAB_GUI_STATE_JOB_H_
#define PASSLAB_GUI_STATE_JOB_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"

namespace passlab::gui {

// What a running job tells the UI: a stage line and done/total counters.
class JobProgress {
 public:
  void SetStage(std::string stage) {
    std::lock_guard<std::mutex> lock(mu_);
    stage_ = std::move(stage);
  }
  std::string stage() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stage_;
  }
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> total{0};
  std::atomic<bool> cancel{false};

 private:
  mutable std::mutex mu_;
  std::string stage_;
};

// Jobs started and not yet finished, process-wide (main waits for them at exit).
int64_t JobsInFlight();
// Blocks until every job has finished or `timeout` passed; true when none is left.
bool WaitForAllJobs(std::chrono::milliseconds timeout);

namespace internal {
void JobStarted();
void JobFinished();
}  // namespace internal

template <typename T>
class Job {
 public:
  using Fn = std::function<absl::StatusOr<T>(JobProgress&)>;

  // Starts `fn` on a new thread; the thread keeps the job alive, so dropping
  // every other reference never blocks the caller.
  static std::shared_ptr<Job<T>> Start(std::string name, Fn fn) {
    auto job = std::shared_ptr<Job<T>>(new Job<T>(std::move(name)));
    internal::JobStarted();
    std::thread([job, fn = std::move(fn)]() mutable {
      absl::StatusOr<T> r = fn(job->progress_);
      {
        std::lock_guard<std::mutex> lock(job->mu_);
        job->result_.emplace(std::move(r));
        job->seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - job->start_).count();
        job->done_.store(true, std::memory_order_release);
      }
      job->cv_.notify_all();
      internal::JobFinished();
    }).detach();
    return job;
  }

  bool done() const { return done_.load(std::memory_order_acquire); }
  // Valid once done().
  const absl::StatusOr<T>& result() const { return *result_; }
  double seconds() const {
    if (done()) return seconds_;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  const std::string& name() const { return name_; }
  JobProgress& progress() { return progress_; }
  void Cancel() { progress_.cancel = true; }
  // For tests and the screenshot mode; the UI never calls it.
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done(); });
  }

 private:
  explicit Job(std::string name) : name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  JobProgress progress_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> done_{false};
  std::optional<absl::StatusOr<T>> result_;
  double seconds_ = 0;
};

template <typename T>
using JobPtr = std::shared_ptr<Job<T>>;

}  // namespace passlab::gui

#endif  // PASSLAB_GUI_STATE_JOB_H_
