// Spin boxes that report clamping.
#include "ui/limited_spin_box.hpp"

#include <cmath>

#include <QLocale>

namespace gpulab::ui {
namespace {

// The number in a spin box's text, without its prefix, suffix and group separators.
QString number_part(const QAbstractSpinBox* box, QString text, const QString& prefix,
                    const QString& suffix) {
  if (!prefix.isEmpty() && text.startsWith(prefix)) text.remove(0, prefix.size());
  if (!suffix.isEmpty() && text.endsWith(suffix)) text.chop(suffix.size());
  return text.remove(box->locale().groupSeparator()).trimmed();
}

}  // namespace

QString clamp_message(const QString& field, const QString& typed, const QString& limit) {
  return QObject::tr("%1: %2 is out of range; it was set to the limit, %3.")
      .arg(field, typed, limit);
}

LimitedSpinBox::LimitedSpinBox(QString field, ClampReport report, QWidget* parent)
    : QSpinBox(parent), field_(std::move(field)), report_(std::move(report)) {
  setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
}

QValidator::State LimitedSpinBox::validate(QString& text, int& pos) const {
  const QValidator::State state = QSpinBox::validate(text, pos);
  if (state != QValidator::Invalid) return state;
  bool ok = false;
  locale().toLongLong(number_part(this, text, prefix(), suffix()), &ok);
  return ok ? QValidator::Intermediate : state;  // a number out of range: fixed up at the end
}

void LimitedSpinBox::fixup(QString& text) const {
  bool ok = false;
  const long long typed = locale().toLongLong(number_part(this, text, prefix(), suffix()), &ok);
  if (ok && (typed < minimum() || typed > maximum())) {
    const int limit = typed < minimum() ? minimum() : maximum();
    if (report_) report_(field_, QString::number(typed), QString::number(limit));
    text = textFromValue(limit);
    return;
  }
  QSpinBox::fixup(text);
}

void LimitedSpinBox::set_checked_value(long long value) {
  if ((value < minimum() || value > maximum()) && report_) {
    const int limit = value < minimum() ? minimum() : maximum();
    report_(field_, QString::number(value), QString::number(limit));
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
  bool ok = false;
  const double typed = locale().toDouble(number_part(this, text, prefix(), suffix()), &ok);
  return ok && std::isfinite(typed) ? QValidator::Intermediate : state;
}

void LimitedDoubleSpinBox::fixup(QString& text) const {
  bool ok = false;
  const double typed = locale().toDouble(number_part(this, text, prefix(), suffix()), &ok);
  if (ok && std::isfinite(typed) && (typed < minimum() || typed > maximum())) {
    const double limit = typed < minimum() ? minimum() : maximum();
    if (report_) report_(field_, QString::number(typed, 'g', 6), QString::number(limit, 'g', 6));
    text = textFromValue(limit);
    return;
  }
  QDoubleSpinBox::fixup(text);
}

void LimitedDoubleSpinBox::set_checked_value(double value) {
  if ((value < minimum() || value > maximum()) && report_) {
    const double limit = value < minimum() ? minimum() : maximum();
    report_(field_, QString::number(value, 'g', 6), QString::number(limit, 'g', 6));
  }
  setValue(std::clamp(value, minimum(), maximum()));
}

}  // namespace gpulab::ui
