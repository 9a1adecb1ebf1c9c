// Spin boxes that report clamping.
#include "ui/setup/limited_spin_box.hpp"

#include <QLocale>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <optional>

namespace gpulab::ui {
namespace {

// The number in a spin box's text, without its prefix, suffix and group separators.
QString number_part(const QAbstractSpinBox* box, QString text, const QString& prefix,
                    const QString& suffix) {
  if (!prefix.isEmpty() && text.startsWith(prefix)) text.remove(0, prefix.size());
  if (!suffix.isEmpty() && text.endsWith(suffix)) text.chop(suffix.size());
  return text.remove(box->locale().groupSeparator()).trimmed();
}

// A number being typed: a sign, digits, a decimal point and an exponent, each perhaps unfinished
// ("-", "1e", "2.5e-"). Qt's boxes refuse the keystroke that starts one out of their range (a
// minus sign where the minimum is positive, an "e"), so the number typed was never what they
// kept; these take it, and fixup says what became of it.
bool number_being_typed(const QAbstractSpinBox* box, const QString& text) {
  const QString point = QRegularExpression::escape(box->locale().decimalPoint());
  static const QString pattern = QStringLiteral("^[+-]?\\d*(%1\\d*)?([eE][+-]?\\d*)?$");
  return QRegularExpression(pattern.arg(point)).match(text).hasMatch();
}

// A value as a report names it: a whole number as is, a real one to six significant digits.
template <typename Wide>
QString number_text(Wide value) {
  if constexpr (std::is_integral_v<Wide>)
    return QString::number(value);
  else
    return QString::number(value, 'g', 6);
}

// The number typed, or nothing when it is none. A whole-number box also takes "1e9", and a value
// past an int, so that the report can say what was typed.
template <typename Wide>
std::optional<Wide> read_number(const QLocale& locale, const QString& number) {
  bool ok = false;
  if constexpr (std::is_integral_v<Wide>) {
    const long long whole = locale.toLongLong(number, &ok);
    if (ok) return whole;
  }
  const double value = locale.toDouble(number, &ok);
  if (!ok || !std::isfinite(value)) return std::nullopt;
  if constexpr (std::is_integral_v<Wide>) {
    if (std::abs(value) >= 9e18) return std::nullopt;
    return std::llround(value);
  }
  return value;
}

}  // namespace

QString clamp_message(const QString& field, const QString& typed, const QString& used,
                      ClampWhy why) {
  switch (why) {
    case ClampWhy::Rounded:
      return QObject::tr("%1: %2 has more decimals than the field keeps; it was set to %3.")
          .arg(field, typed, used);
    case ClampWhy::NotANumber:
      return QObject::tr("%1: \"%2\" is not a number; it stays %3.").arg(field, typed, used);
    case ClampWhy::OutOfRange:
      break;
  }
  return QObject::tr("%1: %2 is out of range; it was set to the limit, %3.")
      .arg(field, typed, used);
}

template <typename Box>
LimitedBox<Box>::LimitedBox(QString field, ClampReport report, QWidget* parent)
    : Box(parent), field_(std::move(field)), report_(std::move(report)) {
  this->setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
}

template <typename Box>
QValidator::State LimitedBox<Box>::validate(QString& text, int& pos) const {
  const QValidator::State state = Box::validate(text, pos);
  if (state != QValidator::Invalid) return state;
  // A number out of range, or on its way (a minus sign): fixed up and reported at the end.
  return number_being_typed(this, number_part(this, text, this->prefix(), this->suffix()))
             ? QValidator::Intermediate
             : state;
}

template <typename Box>
bool LimitedBox<Box>::in_range(Wide value) const {
  return !(value < this->minimum() || value > this->maximum());  // NaN is left to the box
}

template <typename Box>
typename LimitedBox<Box>::Value LimitedBox<Box>::clamp_reported(Wide value) const {
  if (in_range(value)) return Value(value);
  const Value limit = value < this->minimum() ? this->minimum() : this->maximum();
  if (report_)
    report_(field_, number_text<Wide>(value), number_text<Wide>(limit), ClampWhy::OutOfRange);
  return limit;
}

template <typename Box>
void LimitedBox<Box>::fixup(QString& text) const {
  const QString number = number_part(this, text, this->prefix(), this->suffix());
  if (const std::optional<Wide> typed = read_number<Wide>(this->locale(), number)) {
    if constexpr (std::is_floating_point_v<Value>) {
      // In range, typed as "1e-7" in a box of 5 decimals: the box writes it its way, and says so.
      const double kept = this->valueFromText(this->textFromValue(*typed));
      if (report_ && in_range(*typed) && std::abs(kept - *typed) > 1e-12 * std::abs(*typed))
        report_(field_, number, QString::number(kept, 'g', 6), ClampWhy::Rounded);
    }
    text = this->textFromValue(clamp_reported(*typed));
    return;
  }
  if (report_ && !number.isEmpty())
    report_(field_, number, this->textFromValue(this->value()), ClampWhy::NotANumber);
  text = this->textFromValue(this->value());
}

template <typename Box>
void LimitedBox<Box>::set_checked_value(Wide value) {
  this->setValue(clamp_reported(value));
}

template class LimitedBox<QSpinBox>;
template class LimitedBox<QDoubleSpinBox>;

}  // namespace gpulab::ui
