// Spin boxes that say when they clamp. Qt's refuse a keystroke that would leave their range, so
// typing 100000 into a box whose limit is 65536 silently leaves 10000; these accept the typed
// number, clamp it when the edit ends, and report the field, the typed value and the limit.
#pragma once

#include <functional>

#include <QDoubleSpinBox>
#include <QSpinBox>

namespace gpulab::ui {

// (field, typed, limit): "Batch size", "100000", "65536".
using ClampReport =
    std::function<void(const QString& field, const QString& typed, const QString& limit)>;

// The sentence the window shows for a clamp.
QString clamp_message(const QString& field, const QString& typed, const QString& limit);

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
