// Spin boxes that say when they clamp. Qt's refuse a keystroke that would leave their range, so
// typing 100000 into a box whose limit is 65536 silently leaves 10000; these accept the typed
// number, clamp it when the edit ends, and report the field, the typed value and the limit.
#pragma once

#include <functional>

#include <QDoubleSpinBox>
#include <QSpinBox>

namespace gpulab::ui {

// What became of a typed value that the box could not keep as typed.
enum class ClampWhy {
  OutOfRange,  // set to the limit
  Rounded,     // to the box's decimals ("1e-7" in a box of 5 decimals)
  NotANumber,  // "-" or "1e" left alone: the value before it is kept
};

// (field, typed, used, why): "Batch size", "100000", "60000", OutOfRange.
using ClampReport = std::function<void(const QString& field, const QString& typed,
                                       const QString& used, ClampWhy why)>;

// The sentence the window shows for it, naming the field, the value typed and the value used.
QString clamp_message(const QString& field, const QString& typed, const QString& used,
                      ClampWhy why = ClampWhy::OutOfRange);

class LimitedSpinBox : public QSpinBox {
 public:
  LimitedSpinBox(QString field, ClampReport report, QWidget* parent = nullptr);
  // A value set by code (a loaded setup) outside the range is clamped and reported too.
  void set_checked_value(long long value);
  void set_report(ClampReport report) { report_ = std::move(report); }

 protected:
  QValidator::State validate(QString& text, int& pos) const override;
  void fixup(QString& text) const override;

 private:
  QString field_;
  ClampReport report_;
};

class LimitedDoubleSpinBox : public QDoubleSpinBox {
 public:
  LimitedDoubleSpinBox(QString field, ClampReport report, QWidget* parent = nullptr);
  void set_checked_value(double value);
  void set_report(ClampReport report) { report_ = std::move(report); }

 protected:
  QValidator::State validate(QString& text, int& pos) const override;
  void fixup(QString& text) const override;

 private:
  QString field_;
  ClampReport report_;
};

}  // namespace gpulab::ui
