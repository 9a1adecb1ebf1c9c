#!/usr/bin/env python3
"""bench/time_to_accuracy's report.
  time_to_accuracy_summary.py --gpulab-run RUN_DIR SIDE SEED PRECISION
      prints the row of one gpulab run (from its run.json) as one JSON line;
  time_to_accuracy_summary.py [--recipe example|fast] ROWS.jsonl [OUT.json]
      prints one line per side (runs that reached the target, median steps and seconds to it,
      median ms per step) and writes every row and the medians to OUT.json (if named); exit
      status 1 when a gpulab run failed (not when it missed the target)."""
import datetime
import json
import statistics
import sys

TARGET = 0.99
RECIPES = {
    "example": ("pytorch-example, adam lr 1e-3, batch 64, lr x0.7 per epoch, reshuffled every "
                "epoch, test checks every 200 steps and at epoch ends, at most 5 epochs, target "
                "99.0%, each run stopping at the first check at the target"),
    "fast": ("fast-mnist, adam, one-cycle schedule to lr 2.5e-3 (pct_start 0.3, div_factor 25, "
             "final_div_factor 1e4, momentum not cycled), batch 32, one epoch, the test set "
             "checked at its end, target 99.0%"),
}


def gpulab_row(run_dir, side, seed, precision):
    with open(run_dir + "/run.json") as f:
        info = json.load(f)
    s = info["summary"]
    reached = None
    if s.get("time_to_target_s") is not None:
        reached = {"time_to_target_s": s["time_to_target_s"], "step_to_target": s["step_to_target"],
                   "ms_per_step": 1000 * s["time_to_target_s"] / s["step_to_target"]}
    return {"side": side, "seed": int(seed), "precision": precision, "target": TARGET,
            "reached": reached, "final_test_accuracy": s.get("test_accuracy"), "steps": s.get("steps"),
            "train_s": s.get("train_seconds"), "device": info["devices"][0].get("description"),
            "message": info.get("message")}


def summarize(rows):
    summary = []
    for side in dict.fromkeys(r["side"] for r in rows):
        runs = [r for r in rows if r["side"] == side]
        reached = [r["reached"] for r in runs if r.get("reached")]
        line = {"side": side, "runs": len(runs), "reached": len(reached),
                "errors": sorted({r["error"] for r in runs if "error" in r})}
        for field in ("step_to_target", "time_to_target_s", "ms_per_step"):
            line["median_" + field] = statistics.median(r[field] for r in reached) if reached else None
        summary.append(line)
    return summary


def text(line):
    head = "time to %.1f%%, %s: %d of %d runs reached it" % (100 * TARGET, line["side"], line["reached"],
                                                         line["runs"])
    if line["reached"]:
        head += "; median %d steps, %.2f s, %.3f ms/step" % (
            line["median_step_to_target"], line["median_time_to_target_s"], line["median_ms_per_step"])
    if line["errors"]:
        head += "; " + "; ".join(line["errors"])
    return head


def main():
    if sys.argv[1] == "--gpulab-run":
        print(json.dumps(gpulab_row(*sys.argv[2:6])))
        return 0
    args = sys.argv[1:]
    recipe = "example"
    if args[0] == "--recipe":
        recipe, args = args[1], args[2:]
    rows = [json.loads(line) for line in open(args[0]) if line.strip()]
    summary = summarize(rows)
    for line in summary:
        print(text(line))
    if len(args) > 1 and args[1]:
        result = {"benchmark": "time_to_accuracy",
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "recipe": RECIPES[recipe], "summary": summary, "rounds": rows}
        with open(args[1], "w") as f:
            json.dump(result, f, indent=1)
    failed = [r for r in rows if r["side"].startswith("gpulab")
              and not r.get("error", "skipped").startswith("skipped")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
