// Drawing a chart (engine/analysis/chart_builder.hpp) with QCustomPlot, keeping it current as its runs grow,
// and saving it as PNG, PDF or SVG. Shared by the live window and by `gpulab-cli export`.
#pragma once

#include <QColor>
#include <QFont>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/chart_builder.hpp"
#include "ui/charts/chart_marks.hpp"

class QCustomPlot;
class QCPAxis;
class QCPAxisRect;
class QCPBars;
class QCPGraph;
class QCPItemText;
class QCPLegend;

namespace gpulab::ui {

struct PlotTheme {
  double font_scale = 1.0;  // presenter mode: large type for a room
  bool presenter = false;   // thicker lines, black text
  // false: the legend leaves the runs out (it keeps the kinds of line and a bar's parts), as the
  // window names them once, above its charts, when it shows many.
  bool run_legend = true;
};

// From this many runs a legend folds: each run once, in its colour, and one shared entry for each
// kind of hardware line (other programs dashed, a run's further GPUs darker) instead of one per
// run and kind, so that the lanes keep their height; the window then names the runs once for all
// its charts (PlotTheme::run_legend).
inline constexpr size_t kFoldLegendRuns = 3;

// Presenter mode's theme on a screen `height` pixels high: the smallest chart text (a bar chart's
// key, tick labels, legends) at least kPresenterTextPx * height / 1080 pixels high, read from the
// back of a room, and never less than 1.4 times the normal size.
inline constexpr double kPresenterTextPx = 28;
PlotTheme presenter_theme(int height);
// An axis's fonts and pens in the theme.
void style_axis(QCPAxis* axis, const PlotTheme& theme);
// The application font at `scale` times its size (a theme's font_scale).
QFont scaled_font(double scale, bool bold = false);

// A run's colour, from a palette of kRunColorCount colours that stay readable on white and apart
// from each other; index is the run's own (RunStore keeps it per run), so a run keeps its colour
// whichever others are shown beside it. Indices past the palette wrap around.
inline constexpr int kRunColorCount = 22;
QColor run_color(int index);
QColor phase_color(int phase);

struct DrawnLine {
  int panel = 0, line = 0;  // in the Chart
  QCPGraph* raw = nullptr;
  QCPGraph* smooth = nullptr;  // null when smoothing is off or the series has markers
  size_t drawn = 0;            // points already handed to the graphs
  QString label;               // "lenet5_cpu: loss"
};

// The extent of the points a rect has been given, grown as points are appended.
struct DataBounds {
  double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0;
  bool empty = true;
  void add(double x, double y);
};

struct DrawnChart {
  std::vector<QCPAxisRect*> rects;  // one per visible panel, top to bottom
  std::vector<int> rect_panel;      // the Chart panel each rect shows
  std::vector<DataBounds> bounds;   // per rect
  std::vector<bool> percent;        // per rect: a whole 0-100 % axis
  std::vector<bool> fitted;         // per rect: the axes were fitted to data once
  std::vector<DrawnLine> lines;
  struct BarPanel {
    int panel = 0;
    std::vector<QCPBars*> bars;         // per bar set (stacked) or per run (one set)
    std::vector<QCPItemText*> labels;   // value labels over single-set bars
    bool numbered = false;              // runs numbered under the bars, with a key below
    bool labels_fit = true;             // value labels have room beside and above the bars
    // A panel whose every bar is empty for one reason says it once, in its middle, whether or
    // not the labels fit ("not reached" over six runs in a narrow panel).
    QCPItemText* empty_note = nullptr;
  };
  std::vector<BarPanel> bar_panels;
  std::vector<DrawnMark> marks;  // the chart's marks, on every line panel
  QCPLegend* legend = nullptr;
};

// Clears `plot` and draws `chart` into it: a title, one axis rect per visible panel sharing the
// x range, raw lines thin and light with the smoothed line over them, evaluations as dots, bars
// with value labels, the chart's marks (chart_marks), and a legend below. colors: one per chart
// run.
DrawnChart draw_chart(QCustomPlot& plot, const Chart& chart, const std::vector<QColor>& colors,
                      const PlotTheme& theme);

// Fits the text to the plot's size, as laid out now: titles wrapped (elided where they cannot
// be), as many ticks as there is room for, a y label too long for its panel shortened to its
// unit, bar value labels shown only where they fit. draw_chart calls it; call it again after a
// resize.
void fit_text(QCustomPlot& plot, DrawnChart& drawn);

// Hands the graphs the points the chart gained since they were drawn, and the bars their new
// heights. The layout must be unchanged (ChartBuilder::update returned false).
void append_new_points(DrawnChart& drawn, const Chart& chart);
void update_bars(DrawnChart& drawn, const Chart& chart);

// Rescales every axis to its data (bars from zero).
void fit_axes(const DrawnChart& drawn);
// Widens the line panels' axes only where the data left them, with room ahead, so that most new
// points need no change of axes. Returns whether any axis changed.
bool grow_axes(DrawnChart& drawn);

// The layer the lines are drawn on: it has its own paint buffer, so points appended within
// unchanged axes are shown by replotting it alone, without redrawing axes and text.
inline constexpr const char* kDataLayer = "data";
// The property of a title element that holds its brief form (Chart::brief_title), for fit_text.
inline constexpr const char* kBriefTitle = "gpulab-brief-title";

enum class ExportFormat { Png, Pdf, Svg, Csv };
std::optional<ExportFormat> export_format_from_name(const QString& name);  // png, pdf, svg, csv
QString export_format_name(ExportFormat format);

// Whether a chart file may be written at `path`: never over a run's record, a folder, a device
// or a FIFO, nor over a file that is not gpulab's own of the format the name says
// (engine/records/output_paths.hpp). False with the reason in `error`.
bool may_write(const QString& path, QString* error);

// While it lives, may_write and save_text let `path` replace a regular file of another kind
// (gpulab-cli's --force, which its own check has passed); nothing else about the path is lifted.
class ForceReplace {
 public:
  explicit ForceReplace(const QString& path);
  ~ForceReplace();
  ForceReplace(const ForceReplace&) = delete;
  ForceReplace& operator=(const ForceReplace&) = delete;
};

// Writes `text` to `path` atomically (engine/base/files.hpp) where may_write allows it and the
// file there is gpulab's of the same kind as `text` (a picture of its format, a CSV of the same
// header): a full disk or a kill leaves the earlier file whole. False with a message naming the
// file.
bool save_text(const QString& path, const std::string& text, QString* error);

// Saves the plot as it is drawn, at width x height pixels (points for PDF), through save_text:
// drawn in memory first, so the file is replaced whole or not at all. CSV is not a plot
// format: write_chart_csv writes it. Returns false with a message naming the file on failure,
// or where may_write refuses the path.
bool save_plot(QCustomPlot& plot, const QString& path, ExportFormat format, int width, int height,
               QString* error);

// A chart drawn anew for a file of width x height (PNG, PDF, SVG) and saved through save_plot:
// laid out for that size, so its titles are whole and its bars carry their values where they fit
// there, never a window's plot fitted to another size; the runs named in its own legend, in the
// normal theme. `view`: a chart as the window draws it whose moved (zoomed, dragged) line axes
// the file keeps; null: every axis fitted to the data. Every export of a chart goes through it.
bool save_chart(const Chart& chart, const std::vector<QColor>& colors, const QString& path,
                ExportFormat format, int width, int height, QString* error,
                const DrawnChart* view = nullptr);

}  // namespace gpulab::ui
