// A finished study on the page: the numbers (rates with their intervals, the test between A
// and B, how the failed seeds failed, the second moments at initialization), the
// grid of every seed's boundary, and the loss curves.
"use strict";

(function (playground) {
  const { element, percent, interval, thousands, duration, unpack } = playground;
  const THUMB = 64;
  const PAGE = 100;  // the most seeds a grid shows at once

  // The server's data, with its packed arrays unpacked.
  function decode(study) {
    for (const arm of study.arms) {
      for (const [name, value] of Object.entries(arm)) {
        if (value && typeof value === "object" && "base64" in value) arm[name] = unpack(value);
      }
    }
    return study;
  }

  // A seed's outcome in words: "solved" (on a task with a test set, "learned") or its failure.
  function outcomeLabel(study, kind) {
    if (kind === "solved") return study.kind === "classes" ? "learned" : "solved";
    return study.failure_labels[kind][0];
  }

  function rateBar(arm) {
    const [low, high] = arm.interval;
    return element("span", { class: "rate-bar", title: `95 % interval ${interval(arm.interval)}` },
      element("span", { class: "whisker", style: `left:${100 * low}%;width:${100 * (high - low)}%` }),
      element("span", { class: "point", style: `left:${100 * arm.rate}%` }));
  }

  // The table of the arms, the test between A and B, and how precise a rate is. On a task with
  // a test set a seed that succeeds has learned, and its middle column is the test accuracy.
  function numbers(study) {
    const classes = study.kind === "classes";
    // a 2-D set judged by its accuracy (not XOR's four points): its training accuracy
    const trained = !classes && "accuracy_quartiles" in study.arms[0];
    const kinds = Object.keys(study.failure_labels);
    const head = element("tr", {}, element("th", {}, "initializer"),
      element("th", {}, outcomeLabel(study, "solved")),
      element("th", {}, "rate [95 % interval]"), element("th", {}, ""),
      element("th", {}, classes ? "test accuracy: median [quartiles]" :
        trained ? "training accuracy: median [quartiles]" : "median epoch solved"),
      kinds.map((kind) => element("th", { title: study.failure_labels[kind][1] },
                                  study.failure_labels[kind][0])),
      element("th", {}, "training"));
    const middle = (arm, index) => {
      if (classes || trained) {
        const [q1, median, q3] = arm.accuracy_quartiles;
        return element("td", { id: `accuracy-${"ab"[index]}` },
                       `${percent(median)} ${interval([q1, q3])}`);
      }
      return element("td", {}, arm.solved_epoch_quartiles ?
                     thousands(Math.round(arm.solved_epoch_quartiles[1])) : "–");
    };
    const rows = study.arms.map((arm, index) => element("tr", { class: `arm-${"ab"[index]}` },
      element("td", { class: "arm" }, arm.name),
      element("td", { class: "count", id: `solved-${"ab"[index]}` },
              `${thousands(arm.successes)} of ${thousands(arm.n)}`),
      element("td", { class: "rate", id: `rate-${"ab"[index]}` },
              `${percent(arm.rate)} ${interval(arm.interval)}`),
      element("td", {}, rateBar(arm)),
      middle(arm, index),
      kinds.map((kind) => element("td", { class: "count" }, thousands(arm.failures[kind]))),
      element("td", {}, duration(arm.seconds))));
    const parts = [element("h2", {}, classes ? "Seeds that learned" : "Success rates")];
    if (classes) {
      parts.push(element("p", { class: "note" }, `A seed learned when its test accuracy is ` +
        `above ${percent(study.criterion)} (twice chance on ${study.classes} classes).`));
    }
    parts.push(element("table", { class: "numbers" }, element("thead", {}, head),
                       element("tbody", {}, rows)));
    if (study.verdict) {
      const tests = classes ? "Fisher's exact test on the fractions that learned and the " +
        "Mann-Whitney test on the accuracies, Holm over both" : "Fisher's exact test, two-sided";
      parts.push(element("p", { id: "comparison" }, `${tests}: ${study.verdict}.`));
    } else {
      parts.push(element("p", { class: "note" }, "Choose an initializer B to test A against it."));
    }
    const halfWidth = Math.round(98 / Math.sqrt(study.seeds));  // 1.96 √(1/4n), in points
    parts.push(element("p", { class: "note" },
      `Rates come with their Wilson 95 % interval: at ${thousands(study.seeds)} seeds up to ` +
      `about ±${halfWidth} points, so a gap smaller than that is often noise.`));
    return parts;
  }

  // E[x²] after each layer and residual block at initialization: measured over the seeds,
  // and what tinynet.diagnostics predicts for the first seed's network.
  function momentsTable(study) {
    const head = element("tr", {}, element("th", {}, "initializer"), element("th", {}, ""),
      study.positions.map((name) => element("th", {}, name)));
    const number = (v) => (v === null ? "–" : v.toPrecision(3));
    const rows = study.arms.flatMap((arm) => [
      element("tr", {}, element("td", { rowspan: 2 }, arm.name), element("td", {}, "measured"),
        arm.moments.map(({ mean, quartiles: q }) => element("td", {},
          (mean === null ? "–" : mean.toPrecision(3)) +
          (q === null ? "" : ` [${q[0].toPrecision(2)}, ${q[2].toPrecision(2)}]`)))),
      element("tr", { class: "predicted" }, element("td", {}, "predicted"),
        arm.predicted_moments.map((v) => element("td", {}, number(v))))]);
    return element("div", {}, element("h3", {}, "Second moments at initialization"),
      element("p", { class: "note" }, "E[x²] after each layer and residual block over the " +
        "training samples and units, before training: the mean over the seeds [quartiles]; " +
        "the mean tinynet.diagnostics predicts for the first seed's network (through every " +
        "layer of a chain; after each residual block from the first block's input). A sample " +
        "that reaches a LayerNorm as a constant row (XOR's (0, 0) with zero biases) leaves it " +
        "at 0, which the prediction does not count."),
      element("div", { class: "scroll" }, element("table", { class: "numbers moments" },
        element("thead", {}, head), element("tbody", {}, rows))));
  }

  function legend(study) {
    const kinds = ["solved", ...Object.keys(study.failure_labels)];
    return kinds.map((kind) => element("span", { class: `swatch outcome-${kind}` }, outcomeLabel(study, kind)));
  }

  // One seed's thumbnail: its decision boundary, or on a task with a test set its test
  // accuracy as a shaded tile (playground.accuracyTile).
  function thumbnail(study, arm, index) {
    if (study.kind === "classes") return playground.accuracyTile(study, arm, index, THUMB);
    const { resolution, not_finite: notFinite, extent } = study.grid;
    const canvas = element("canvas", { width: THUMB, height: THUMB });
    playground.drawBoundary(canvas, arm.boundaries.row(index), resolution, notFinite,
                            study.data, extent,
                            playground.pointRadius(study.data.X.length, THUMB));
    return canvas;
  }

  // One grid per arm of the seeds from `first` (an index) on, at most PAGE of them, in the
  // same places, framed by outcome; `onPick(index)` when a seed is clicked.
  function grids(study, onPick, first) {
    const differ = new Set(study.differ);
    const count = Math.min(PAGE, study.seeds - first);
    const columns = Math.ceil(Math.sqrt(count));
    return study.arms.map((arm, a) => {
      const panels = arm.outcomes.slice(first, first + count).map((kind, k) => {
        const index = first + k, seed = study.first_seed + index;
        const accuracy = study.kind === "classes" ?
          `, test accuracy ${percent(arm.test_accuracy.values[index])}` : arm.train_accuracy ?
            `, training accuracy ${percent(arm.train_accuracy.values[index])}` : "";
        const button = element("button", {
          type: "button", class: `seed outcome-${kind}${differ.has(index) ? " differs" : ""}`,
          "data-seed": seed, "data-index": index, "data-outcome": kind,
          title: `seed ${seed}: ${outcomeLabel(study, kind)}${accuracy}`,
        }, thumbnail(study, arm, index));
        button.addEventListener("click", () => onPick(index));
        return button;
      });
      return element("div", { class: `grid-column arm-${"ab"[a]}` },
        element("h3", {}, `${arm.name}: ${thousands(arm.successes)} of ${thousands(arm.n)} ` +
                          outcomeLabel(study, "solved")),
        element("div", { class: "grid", id: `grid-${"ab"[a]}`, style: `--columns:${columns}` }, panels));
    });
  }

  // Past PAGE seeds the grids show a page of them at a time (a tile stays large enough to
  // read): a button per page, the one shown pressed.
  function pager(study, onPick) {
    const pages = Math.ceil(study.seeds / PAGE);
    const show = (page) => {
      document.getElementById("grids").replaceChildren(...grids(study, onPick, page * PAGE));
      for (const button of document.querySelectorAll("#pages button")) {
        button.setAttribute("aria-pressed", String(Number(button.dataset.page) === page));
      }
    };
    const buttons = pages < 2 ? [] : Array.from({ length: pages }, (_, page) => {
      const from = study.first_seed + page * PAGE;
      const to = study.first_seed + Math.min(study.seeds, (page + 1) * PAGE) - 1;
      const button = element("button", { type: "button", "data-page": page },
                             `${thousands(from)}–${thousands(to)}`);
      button.addEventListener("click", () => show(page));
      return button;
    });
    document.getElementById("pages").replaceChildren(
      ...(buttons.length ? [element("span", {}, `Seeds ${PAGE} at a time: `), ...buttons] : []));
    show(0);
  }

  function epochsOf(study) {
    const records = study.arms[0].loss.shape[1];
    return Array.from({ length: records }, (_, k) => (k + 1) * study.record_every);
  }

  function curves(study) {
    const xs = epochsOf(study);
    return study.arms.map((arm, a) => {
      const canvas = element("canvas", { width: 480, height: 260, id: `curves-${"ab"[a]}` });
      const series = [];
      for (const failed of [false, true]) {
        arm.outcomes.forEach((kind, index) => {
          if ((kind !== "solved") === failed) {
            series.push({ values: arm.loss.row(index), width: 1,
                          colour: failed ? "rgba(200,30,30,0.45)" : "rgba(70,110,170,0.18)" });
          }
        });
      }
      playground.logChart(canvas, xs, series, "epoch", `${study.loss_name} loss`);
      return element("figure", { class: `arm-${"ab"[a]}` }, canvas,
                     element("figcaption", {}, arm.name));
    });
  }

  function show(study, onPick) {
    const classes = study.kind === "classes";  // a task with a test set: tiles of accuracy
    document.getElementById("describe").textContent = study.describe;
    document.getElementById("numbers").replaceChildren(...numbers(study));
    document.getElementById("moments").replaceChildren(momentsTable(study));
    document.getElementById("grid-title").textContent = classes ?
      "Every seed's test accuracy" : "Every seed's decision boundary";
    document.getElementById("legend").replaceChildren(...legend(study), " ",
      classes ? playground.accuracyBar(study) : playground.colourBar());
    pager(study, onPick);
    document.getElementById("curves").replaceChildren(...curves(study));
    document.getElementById("results").hidden = false;
  }

  Object.assign(playground, { decodeStudy: decode, showStudy: show, epochsOf, outcomeLabel });
})(window.playground);
