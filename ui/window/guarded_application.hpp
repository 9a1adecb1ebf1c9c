// The window's application object: an exception that reaches the event loop is caught there and
// reported instead of ending the program, and SIGTERM/SIGINT arrive as a Qt signal.
#pragma once

#include <QApplication>
#include <QString>

class QSocketNotifier;

namespace gpulab::ui {

class GuardedApplication : public QApplication {
  Q_OBJECT

 public:
  GuardedApplication(int& argc, char** argv);
  ~GuardedApplication() override;

  // Delivers the event; an exception thrown by its handler is caught, printed and reported by
  // error_caught (queued, so the report runs after the handler's stack is gone).
  bool notify(QObject* receiver, QEvent* event) override;

  // From now on SIGTERM and SIGINT emit termination_requested. The signal handler only writes
  // the signal's number to a pipe (a self-pipe); the window's thread reads it.
  void watch_termination_signals();

 signals:
  void error_caught(const QString& what);
  void termination_requested(const QString& signal_name);

 private:
  void read_signal();
  QSocketNotifier* signal_notifier_ = nullptr;
};

}  // namespace gpulab::ui
