// Spin boxes that report clamping.
#include "ui/setup/limited_spin_box.hpp"

#include <cmath>

#include <QLocale>
#include <QRegularExpression>

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

LimitedSpinBox::LimitedSpinBox(QString field, ClampReport report, QWidget* parent)
    : QSpinBox(parent), field_(std::move(field)), report_(std::move(report)) {
  setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
}

QValidator::State LimitedSpinBox::validate(QString& text, int& pos) const {
  const QValidator::State state = QSpinBox::validate(text, pos);
  if (state != QValidator::Invalid) return state;
  // A number out of range, or on its way (a minus sign): fixed up and reported at the end.
  return number_being_typed(this, number_part(this, text, prefix(), suffix()))
             ? QValidator::Intermediate
             : state;
}

void LimitedSpinBox::fixup(QString& text) const {
  bool ok = false;
  const QString number = number_part(this, text, prefix(), suffix());
  long long typed = locale().toLongLong(number, &ok);
  if (!ok) {  // "1e9" for a whole number
    const double value = locale().toDouble(number, &ok);
    ok = ok && std::isfinite(value) && std::abs(value) < 9e18;
    if (ok) typed = std::llround(value);
  }
  if (ok && (typed < minimum() || typed > maximum())) {
    const int limit = typed < minimum() ? minimum() : maximum();
    if (report_)
      report_(field_, QString::number(typed), QString::number(limit), ClampWhy::OutOfRange);
    text = textFromValue(limit);
    return;
  }
  if (ok) {
    text = textFromValue(int(typed));
    return;
  }
  if (report_ && !number.isEmpty())
    report_(field_, number, textFromValue(value()), ClampWhy::NotANumber);
  text = textFromValue(value());
}

void LimitedSpinBox::set_checked_value(long long value) {
  if ((value < minimum() || value > maximum()) && report_) {
    const int limit = value < minimum() ? minimum() : maximum();
    report_(field_, QString::number(value), QString::number(limit), ClampWhy::OutOfRange);
  }
  setValue(int(std::clamp<long long>(value, minimum(), maximum())));
}

LimitedDoubleSpinBox::LimitedDoubleSpinBox(QString field, ClampReport report, QWidget* parent)
    : QDoubleSpinBox(parent), field_(std::move(field)), report_(std::move(report)) {
  setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
}

QValidator::State LimitedDoubleSpinBox::validate(QString& text, int& pos) const {
  const QValidator::State state = QDoubleSpinBox::validate(text, pos);
  if (state != QValidator::Invalid) return state;
  return number_being_typed(this, number_part(this, text, prefix(), suffix()))
             ? QValidator::Intermediate
             : state;
}

void LimitedDoubleSpinBox::fixup(QString& text) const {
  bool ok = false;
  const QString number = number_part(this, text, prefix(), suffix());
  const double typed = locale().toDouble(number, &ok);
  if (ok && std::isfinite(typed) && (typed < minimum() || typed > maximum())) {
    const double limit = typed < minimum() ? minimum() : maximum();
    if (report_)
      report_(field_, QString::number(typed, 'g', 6), QString::number(limit, 'g', 6),
              ClampWhy::OutOfRange);
    text = textFromValue(limit);
    return;
  }
  if (ok && std::isfinite(typed)) {  // in range, typed as "1e-3": the box writes it its way
    if (report_ && std::abs(valueFromText(textFromValue(typed)) - typed) > 1e-12 * std::abs(typed))
      report_(field_, number, QString::number(valueFromText(textFromValue(typed)), 'g', 6),
              ClampWhy::Rounded);
    text = textFromValue(typed);
    return;
  }
  if (report_ && !number.isEmpty())
    report_(field_, number, textFromValue(value()), ClampWhy::NotANumber);
  text = textFromValue(value());
}

void LimitedDoubleSpinBox::set_checked_value(double value) {
  if ((value < minimum() || value > maximum()) && report_) {
    const double limit = value < minimum() ? minimum() : maximum();
    report_(field_, QString::number(value, 'g', 6), QString::number(limit, 'g', 6),
            ClampWhy::OutOfRange);
  }
  setValue(std::clamp(value, minimum(), maximum()));
}

}  // namespace gpulab::ui
