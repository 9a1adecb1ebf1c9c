// The window's application object: its event boundary and its signal pipe.
#include "ui/window/guarded_application.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <QSocketNotifier>
#include <cerrno>
#include <cstdio>
#include <exception>

namespace gpulab::ui {
namespace {

int signal_pipe[2] = {-1, -1};

// Async-signal-safe: one write of one byte, errno kept.
void on_signal(int number) {
  const int saved = errno;
  const char byte = char(number);
  [[maybe_unused]] const ssize_t ignored = ::write(signal_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

GuardedApplication::GuardedApplication(int& argc, char** argv) : QApplication(argc, argv) {}

GuardedApplication::~GuardedApplication() {
  if (signal_notifier_) {
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
  }
}

bool GuardedApplication::notify(QObject* receiver, QEvent* event) {
  QString what;
  try {
    return QApplication::notify(receiver, event);
  } catch (const std::exception& e) {
    what = QString::fromStdString(e.what());
  } catch (...) {
    what = "an error of unknown type";
  }
  std::fprintf(stderr, "gpulab: %s (caught by the window, which goes on)\n", qPrintable(what));
  QMetaObject::invokeMethod(
      this, [this, what] { emit error_caught(what); }, Qt::QueuedConnection);
  return false;
}

void GuardedApplication::watch_termination_signals() {
  if (signal_notifier_) return;
  if (::pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::perror("gpulab: cannot watch SIGTERM and SIGINT");
    return;
  }
  signal_notifier_ = new QSocketNotifier(signal_pipe[0], QSocketNotifier::Read, this);
  connect(signal_notifier_, &QSocketNotifier::activated, this, &GuardedApplication::read_signal);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
}

void GuardedApplication::read_signal() {
  char byte = 0;
  while (::read(signal_pipe[0], &byte, 1) == 1)
    emit termination_requested(byte == SIGINT ? "SIGINT" : "SIGTERM");
}

}  // namespace gpulab::ui
