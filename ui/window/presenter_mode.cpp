// Presenter mode's style sheet and chart theme.
#include "ui/window/presenter_mode.hpp"

#include <QApplication>
#include <QEvent>
#include <QLabel>
#include <QString>
#include <QTextDocument>
#include <QWidget>
#include <algorithm>
#include <cmath>

namespace gpulab::ui {

namespace {

double normal_points(const QFont& normal_font) {
  return normal_font.pointSizeF() > 0 ? normal_font.pointSizeF() : 10;
}

}  // namespace

void set_presenter_style(QWidget* window, bool on, const QFont& normal_font) {
  // Through the style sheet, so that rows made later (a run's status line) are large too: a
  // widget under a style sheet takes its font from it, not from its parent. The headline sizes
  // itself to the window (headline_size).
  const double points = normal_points(normal_font);
  // Disabled controls keep a grey text: black for every state would make them look enabled.
  window->setStyleSheet(
      on ? QString("QMainWindow, QWidget { background: white; color: black; font-size: %1pt; }"
                   " QWidget:disabled { color: #9a9a9a; }")
               .arg(points * 1.5, 0, 'f', 1)
         : QString());
  if (!on) {
    // Widgets the style sheet gave a font keep it when the sheet goes (spin boxes' editors, the
    // runs list's header): each is told to take its parent's again (none has one of its own).
    for (QWidget* widget : window->findChildren<QWidget*>()) widget->setFont(QFont());
    // Widgets that cache their size from their parts (a spin box from its editor's font) read it
    // while the parts still had the large type: told the style changed, they measure again
    // (the setup's rows stayed presenter-tall).
    for (QWidget* widget : window->findChildren<QWidget*>()) {
      QEvent changed(QEvent::StyleChange);
      QApplication::sendEvent(widget, &changed);
      widget->updateGeometry();
    }
  }
}

PlotTheme window_chart_theme(bool presenter, int window_height, bool run_legend) {
  // In presenter mode the charts' text grows with the screen: the window fills it.
  PlotTheme theme = presenter ? presenter_theme(window_height) : PlotTheme{};
  theme.run_legend = run_legend;
  return theme;
}

HeadlineSize headline_size(int window_height, const QFont& normal_font) {
  const double scale = std::clamp(window_height / 1080.0, 2.0 / 3.0, 1.0);
  return {window_height >= 1000  ? 4
          : window_height >= 800 ? 3
                                 : 2,
          normal_points(normal_font) * 2.4 * scale};
}

void fit_headline_text(QLabel* label, int lines, double points) {
  if (lines <= 0) {
    label->setMinimumHeight(0);
    label->setMaximumHeight(QWIDGETSIZE_MAX);
    label->setStyleSheet(QString());
    return;
  }
  // Measured as the label draws it: its font at a size, its rich text wrapped to its width.
  QTextDocument document;
  document.setDocumentMargin(0);
  QFont font = label->font();
  const auto height_of = [&](const QString& html, double size, int width) {
    font.setPointSizeF(size);
    document.setDefaultFont(font);
    document.setHtml(html);
    document.setTextWidth(width);
    return int(std::ceil(document.size().height()));
  };
  QStringList room;
  for (int i = 0; i < lines; ++i) room << QStringLiteral("Xg");
  const int height = height_of(room.join("<br>"), points, 10000);
  label->setFixedHeight(height);
  const int width = label->contentsRect().width();
  double size = points;
  while (width > 0 && size > points / 2 && height_of(label->text(), size, width) > height)
    size *= 0.94;
  // Still too long at half the size: the tabs move rather than the headline being cut short.
  if (width > 0) label->setFixedHeight(std::max(height, height_of(label->text(), size, width)));
  // The label's own style sheet: it outranks the window's, and restyles only the label.
  label->setStyleSheet(QString("font-size: %1pt;").arg(size, 0, 'f', 1));
}

}  // namespace gpulab::ui
