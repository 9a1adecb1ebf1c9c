// What the scaling chart says in words: which run stands for each replica count and why, its
// flags, and the model behind the ideal and predicted lines; short on screen, whole in its files.
#include <QStringList>
#include <cmath>

#include "engine/analysis/run_figures.hpp"
#include "ui/charts/chart_legend.hpp"
#include "ui/charts/scaling_chart.hpp"

namespace gpulab::ui {

QString ScalingChart::runs_text(bool base_flags) const {
  if (!study_) return {};
  // Only what the plot cannot say: flagged points, and where a run was chosen among several.
  QStringList parts;
  for (const ScalingPoint& p : study_->points) {
    const bool flags_said = !p.flags.empty() && (base_flags || &p != &study_->points.front());
    if (!flags_said && p.others.empty()) continue;
    QString part = tr("R = %1").arg(p.replicas);
    if (flags_said) {
      QStringList flags;
      for (const std::string& flag : p.flags) flags << QString::fromStdString(flag_headline(flag));
      part += tr(" ⚠ %1").arg(flags.join("; "));
    }
    if (!p.others.empty())
      part += p.picked ? tr(" (%1, picked over %2 other run(s))")
                             .arg(QString::fromStdString(names_[size_t(p.run)]))
                             .arg(p.others.size())
                       : tr(" (%1 of %2 runs: %3; right-click to pick another)")
                             .arg(QString::fromStdString(names_[size_t(p.run)]))
                             .arg(p.others.size() + 1)
                             .arg(QString::fromStdString(p.chosen_because));
    parts << part;
  }
  return parts.isEmpty() ? QString() : parts.join("; ") + ".";
}

QString ScalingChart::model_text() const {
  if (!study_) return {};
  const ScalingModel& m = study_->model;
  // H(R), the hardware at R replicas over the base's, as the records give it.
  const QString unit = study_->label.find("cuda") != std::string::npos ? tr("GPUs") : tr("cores");
  const QString base = QString::number(m.base_replicas);
  QString ideal, shard;
  switch (m.hardware_growth()) {
    case ScalingModel::HardwareGrowth::Shared:
      ideal = tr("the %1-replica images/s: every run has the same %2 %3, which more replicas "
                 "only split")
                  .arg(base)
                  .arg(m.hardware.front().second)
                  .arg(unit);
      shard = tr("%1 ms").arg(m.shard_ms, 0, 'f', 2);
      break;
    case ScalingModel::HardwareGrowth::Unknown:
    case ScalingModel::HardwareGrowth::PerReplica:
      ideal = tr("R / %1 × the %1-replica images/s, each replica with its own %2%3")
                  .arg(base, unit,
                       m.hardware_growth() == ScalingModel::HardwareGrowth::Unknown
                           ? tr(" (taken: the records do not say)")
                           : QString());
      shard = tr("%1 ms × %2 / R").arg(m.shard_ms, 0, 'f', 2).arg(base);
      break;
    case ScalingModel::HardwareGrowth::Measured: {
      QStringList at, ratio;
      for (const auto& [replicas, units] : m.hardware) {
        at << QString::number(replicas);
        ratio << QString::number(m.hardware_ratio(replicas), 'g', 3);
      }
      ideal = tr("H × the %1-replica images/s, H = the %2 of a run over the %1-replica run's: %3 "
                 "at R = %4")
                  .arg(base, unit, ratio.join(", "), at.join(", "));
      shard = tr("%1 ms / H").arg(m.shard_ms, 0, 'f', 2);
      break;
    }
  }
  QString text = tr("Ideal: %1. Predicted step: %2 (shards) + %3 ms (optimizer, loop) + "
                    "2 (R − 1) / R × %4 ms (all-reduce)")
                     .arg(ideal, shard)
                     .arg(m.fixed_ms, 0, 'f', 2)
                     .arg(m.transfer_ms, 0, 'f', 3);
  if (std::isfinite(m.bandwidth_gb_per_s()))
    text += tr(": %1 GB/s for %2 MB of gradients")
                .arg(m.bandwidth_gb_per_s(), 0, 'f', 2)
                .arg(m.gradient_bytes / 1e6, 0, 'f', 2);
  return text + ".";
}

QString ScalingChart::baseline_text() const {
  if (!study_) return {};
  // One sentence on screen; the exported file keeps the engine's two lines.
  return QString::fromStdString(study_->baseline_warning()).replace('\n', ": ");
}

QString ScalingChart::caption_html() const {
  QStringList parts;
  if (const QString warning = baseline_text(); !warning.isEmpty())
    parts << QString("<span style=\"color:#a04000\">%1.</span>").arg(warning.toHtmlEscaped());
  // The baseline's flags once: the warning says them.
  if (const QString runs = runs_text(parts.isEmpty()); !runs.isEmpty())
    parts << runs.toHtmlEscaped();
  return parts.join(' ');
}

}  // namespace gpulab::ui
