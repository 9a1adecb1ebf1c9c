// Spin boxes that say when they clamp. Qt's refuse a keystroke that would leave their range, so
// typing 100000 into a box whose limit is 65536 silently leaves 10000; these accept the typed
// number, clamp it when the edit ends, and report the field, the typed value and the limit.
#pragma once

#include <QDoubleSpinBox>
#include <QSpinBox>
#include <functional>
#include <type_traits>
#include <utility>

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

// A Qt spin box (QSpinBox or QDoubleSpinBox) that takes any number typed and reports clamping.
// One piece of code for both; the int box reads a typed value wider than an int ("1e9",
// 100000000000) so that the report names what was typed.
template <typename Box>
class LimitedBox : public Box {
 public:
  using Value = decltype(std::declval<const Box&>().value());
  // What a typed or loaded value is read as before it is clamped into the box.
  using Wide = std::conditional_t<std::is_integral_v<Value>, long long, double>;

  LimitedBox(QString field, ClampReport report, QWidget* parent = nullptr);
  // A value set by code (a loaded setup) outside the range is clamped and reported too.
  void set_checked_value(Wide value);
  void set_report(ClampReport report) { report_ = std::move(report); }

 protected:
  QValidator::State validate(QString& text, int& pos) const override;
  void fixup(QString& text) const override;

 private:
  bool in_range(Wide value) const;
  // The value clamped into the range; one outside it is reported, with the limit used.
  Value clamp_reported(Wide value) const;

  QString field_;
  ClampReport report_;
};

extern template class LimitedBox<QSpinBox>;
extern template class LimitedBox<QDoubleSpinBox>;

// Named classes, so that headers can declare them without the template.
class LimitedSpinBox : public LimitedBox<QSpinBox> {
 public:
  using LimitedBox::LimitedBox;
};

class LimitedDoubleSpinBox : public LimitedBox<QDoubleSpinBox> {
 public:
  using LimitedBox::LimitedBox;
};

}  // namespace gpulab::ui
