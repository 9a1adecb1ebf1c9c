// Chart files: formats, where a file may be written, atomic writes, and a chart drawn for a file.
#include <qcustomplot.h>

#include <QBuffer>
#include <QFileInfo>
#include <QPageLayout>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>

#include "engine/analysis/chart_csv.hpp"
#include "engine/base/files.hpp"
#include "engine/base/output_kind.hpp"
#include "engine/records/output_paths.hpp"
#include "ui/charts/chart_render.hpp"

namespace gpulab::ui {

std::optional<ExportFormat> export_format_from_name(const QString& name) {
  const QString n = name.toLower();
  if (n == "png") return ExportFormat::Png;
  if (n == "pdf") return ExportFormat::Pdf;
  if (n == "svg") return ExportFormat::Svg;
  if (n == "csv") return ExportFormat::Csv;
  return std::nullopt;
}

QString export_format_name(ExportFormat format) {
  switch (format) {
    case ExportFormat::Png:
      return "png";
    case ExportFormat::Pdf:
      return "pdf";
    case ExportFormat::Svg:
      return "svg";
    case ExportFormat::Csv:
      return "csv";
  }
  return "?";
}

namespace {

// A picture format the name says, before anything is drawn.
const OutputKind* picture_kind_of_name(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "png") return &png_picture_kind();
  if (suffix == "svg") return &svg_picture_kind();
  if (suffix == "pdf") return &pdf_picture_kind();
  return nullptr;
}

// What `text` is as an output: a picture by its bytes, any other file (a CSV, a report) by its
// first line, so that a file is replaced only by one of the same format and columns.
OutputKind kind_of_text(const std::string& text) {
  if (text.starts_with("\x89PNG")) return png_picture_kind();
  if (text.starts_with("%PDF-")) return pdf_picture_kind();
  if (text.substr(0, 4096).find("<svg") != std::string::npos) return svg_picture_kind();
  const std::string first = text.substr(0, text.find('\n'));
  // A chart's CSV of any chart and x axis replaces another, as export --out does.
  if (first.starts_with("panel,run,series,device,") ||
      first.starts_with("run,device,batch,precision,status,"))
    return chart_csv_kind();
  return first_line_kind(
      first.find(',') != std::string::npos ? "a CSV of these columns" : "a file of this kind",
      [first](std::string_view line) { return line == first; });
}

QString& forced_path() {
  static QString path;  // drawing happens on one thread: the CLI's, or the window's
  return path;
}

bool may_write_kind(const QString& path, const OutputKind& kind, QString* error) {
  try {
    check_output_file(path.toStdString(), "Export", kind,
                      !forced_path().isEmpty() && path == forced_path());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

}  // namespace

ForceReplace::ForceReplace(const QString& path) { forced_path() = path; }
ForceReplace::~ForceReplace() { forced_path().clear(); }

bool may_write(const QString& path, QString* error) {
  // Where the name says no picture, save_text judges the file by what it is about to write.
  static const OutputKind checked_later{"", [](const std::filesystem::path&) { return true; }};
  const OutputKind* picture = picture_kind_of_name(path);
  return may_write_kind(path, picture ? *picture : checked_later, error);
}

bool save_text(const QString& path, const std::string& text, QString* error) {
  if (!may_write_kind(path, kind_of_text(text), error)) return false;
  try {
    write_file_atomically(path.toStdString(), text);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

namespace {

// The plot as `format` in memory, as QCustomPlot's own savePng and savePdf draw it (96 dpi; a
// PDF page of width x height points, drawn as the PNG is): the bytes then go to the file in one atomic write, since Qt's
// writers fill the file in place and say nothing of a full disk.
QByteArray plot_bytes(QCustomPlot& plot, ExportFormat format, int width, int height) {
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  switch (format) {
    case ExportFormat::Png: {
      QImage image = plot.toPixmap(width, height, 1.0).toImage();
      const int dots_per_meter = int(std::lround(96 / 0.0254));
      image.setDotsPerMeterX(dots_per_meter);
      image.setDotsPerMeterY(dots_per_meter);
      // gpulab's mark, by which a later export knows the file as its own to replace.
      image.setText(kPngSoftwareKey, kPngSoftwareValue);
      if (!image.save(&buffer, "PNG")) return {};
      break;
    }
    case ExportFormat::Pdf: {
      QPdfWriter pdf(&buffer);
      // At the PNG's 96 dpi, so that a font's points become as many logical units as on screen:
      // at QPdfWriter's own 1200 dpi, a 10 pt font was 167 units on a page `width` units wide,
      // text about 16 times too large, overlapping into noise.
      pdf.setResolution(96);
      pdf.setPageLayout(QPageLayout(
          QPageSize(QSize(width, height), QPageSize::Point, QString(), QPageSize::ExactMatch),
          QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
      pdf.setCreator(QStringLiteral("gpulab"));
      QCPPainter painter;
      if (!painter.begin(&pdf)) return {};
      painter.setMode(QCPPainter::pmVectorized);
      painter.setWindow(QRect(0, 0, width, height));
      plot.toPainter(&painter, width, height);
      if (!painter.end()) return {};
      break;
    }
    case ExportFormat::Svg: {
      QSvgGenerator svg;
      svg.setOutputDevice(&buffer);
      svg.setSize(QSize(width, height));
      svg.setViewBox(QRect(0, 0, width, height));
      svg.setTitle(QStringLiteral("gpulab chart"));
      QCPPainter painter;
      if (!painter.begin(&svg)) return {};
      plot.toPainter(&painter, width, height);
      if (!painter.end()) return {};
      break;
    }
    case ExportFormat::Csv:
      return {};
  }
  buffer.close();
  return buffer.data();
}

}  // namespace

bool save_plot(QCustomPlot& plot, const QString& path, ExportFormat format, int width, int height,
               QString* error) {
  if (format == ExportFormat::Csv) {
    if (error) *error = "CSV is written from the chart's data, not from the plot";
    return false;
  }
  if (!may_write(path, error)) return false;
  const QByteArray bytes = plot_bytes(plot, format, width, height);
  if (bytes.isEmpty()) {
    if (error)
      *error = path + ": Qt could not draw the chart as " + export_format_name(format) +
               "; nothing was written";
    return false;
  }
  return save_text(path, bytes.toStdString(), error);
}

bool save_chart(const Chart& chart, const std::vector<QColor>& colors, const QString& path,
                ExportFormat format, int width, int height, QString* error,
                const DrawnChart* view) {
  if (!may_write(path, error)) return false;
  QCustomPlot plot;
  plot.resize(width, height);
  const DrawnChart drawn = draw_chart(plot, chart, colors, PlotTheme{});
  if (view)
    for (size_t i = 0; i < drawn.rects.size(); ++i) {
      const int panel = drawn.rect_panel[i];
      if (chart.panels[size_t(panel)].is_bars()) continue;
      const auto at = std::find(view->rect_panel.begin(), view->rect_panel.end(), panel);
      if (at == view->rect_panel.end()) continue;
      const QCPAxisRect* shown = view->rects[size_t(at - view->rect_panel.begin())];
      for (QCPAxis::AxisType type : {QCPAxis::atBottom, QCPAxis::atLeft})
        drawn.rects[i]->axis(type)->setRange(shown->axis(type)->range());
    }
  plot.replot(QCustomPlot::rpImmediateRefresh);
  return save_plot(plot, path, format, width, height, error);
}

}  // namespace gpulab::ui
