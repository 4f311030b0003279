// A study on a task with a test set (the digits, MNIST-1D): the numbers (the fraction of seeds
// that learned with its interval, the median test accuracy, the tests between A and B), a grid
// of every seed's test accuracy framed by whether it learned, and one seed up close: its
// confusion matrix on the test set and its curves.
"use strict";

(function (playground) {
  const { element, percent, interval, thousands, duration } = playground;
  const COLOURS = ["rgb(49,104,176)", "rgb(227,119,24)"];
  const THUMB = 44;

  // Grey (chance or below) to green (every test sample right): a test accuracy's colour.
  function shade(accuracy, chance) {
    const t = Math.min(1, Math.max(0, (accuracy - chance) / (1 - chance)));
    const from = [225, 225, 225], to = [46, 139, 87];
    return `rgb(${from.map((c, k) => Math.round(c + (to[k] - c) * t)).join(",")})`;
  }

  function numbers(study) {
    const head = element("tr", {}, element("th", {}, "initializer"), element("th", {}, "learned"),
      element("th", {}, "rate [95 % interval]"), element("th", {}, ""),
      element("th", {}, "test accuracy: median [quartiles]"),
      element("th", { title: study.failure_labels.below_criterion[1] }, "below"),
      element("th", { title: study.failure_labels.diverged[1] }, "diverged"),
      element("th", {}, "training"));
    const rows = study.arms.map((arm, index) => element("tr", {},
      element("td", {}, arm.name),
      element("td", { class: "count", id: `solved-${"ab"[index]}` },
              `${thousands(arm.successes)} of ${thousands(arm.n)}`),
      element("td", { class: "rate", id: `rate-${"ab"[index]}` },
              `${percent(arm.rate)} ${interval(arm.interval)}`),
      element("td", {}, playground.rateBar(arm)),
      element("td", { id: `accuracy-${"ab"[index]}` },
              `${percent(arm.accuracy_quartiles[1])} ${interval([arm.accuracy_quartiles[0],
                                                                  arm.accuracy_quartiles[2]])}`),
      element("td", { class: "count" }, thousands(arm.failures.below_criterion)),
      element("td", { class: "count" }, thousands(arm.failures.diverged)),
      element("td", {}, duration(arm.seconds))));
    const parts = [element("h2", {}, "Seeds that learned"),
      element("p", { class: "note" }, `A seed learned when its test accuracy is above ` +
        `${percent(study.criterion)} (twice chance on ${study.classes} classes).`),
      element("table", { class: "numbers" }, element("thead", {}, head), element("tbody", {}, rows))];
    if (study.verdict) {
      parts.push(element("p", { id: "comparison" }, `Fisher's exact test on the fractions that ` +
        `learned and the Mann-Whitney test on the accuracies, Holm over both: ${study.verdict}.`));
    } else {
      parts.push(element("p", { class: "note" }, "Choose an initializer B to test A against it."));
    }
    return parts;
  }

  function accuracyBar(study) {
    const canvas = element("canvas", { width: 160, height: 12, class: "colour-bar" });
    const context = canvas.getContext("2d");
    const chance = 1 / study.classes;
    for (let x = 0; x < 160; x++) {
      context.fillStyle = shade(x / 159, chance);
      context.fillRect(x, 0, 1, 12);
    }
    return element("span", { class: "bar" }, "test accuracy 0 ", canvas, " 1 (grey: chance)");
  }

  function tile(accuracy, study) {
    const canvas = element("canvas", { width: THUMB, height: THUMB });
    const context = canvas.getContext("2d");
    context.fillStyle = shade(accuracy, 1 / study.classes);
    context.fillRect(0, 0, THUMB, THUMB);
    context.fillStyle = "#111";
    context.font = "14px sans-serif";
    context.textAlign = "center";
    context.textBaseline = "middle";
    context.fillText(Math.round(100 * accuracy), THUMB / 2, THUMB / 2);
    return canvas;
  }

  // One grid per arm, seeds in the same places, each tile its test accuracy in percent.
  function grids(study, onPick) {
    const differ = new Set(study.differ);
    const columns = Math.ceil(Math.sqrt(study.seeds));
    return study.arms.map((arm, a) => {
      const tiles = arm.outcomes.map((kind, index) => {
        const accuracy = arm.test_accuracy.values[index];
        const seed = study.first_seed + index;
        const button = element("button", {
          type: "button", class: `seed outcome-${kind}${differ.has(index) ? " differs" : ""}`,
          "data-seed": seed, "data-index": index, "data-outcome": kind,
          title: `seed ${seed}: ${playground.outcomeLabel(study, kind)}, test accuracy ` +
                 `${percent(accuracy)}`,
        }, tile(accuracy, study));
        button.addEventListener("click", () => onPick(index));
        return button;
      });
      return element("div", { class: "grid-column" },
        element("h3", {}, `${arm.name}: ${thousands(arm.successes)} of ${thousands(arm.n)} learned`),
        element("div", { class: "grid", id: `grid-${"ab"[a]}`, style: `--columns:${columns}` }, tiles));
    });
  }

  // A confusion matrix as a table: row the true class, column the class given, shaded by
  // the fraction of the row.
  function confusion(matrix, classes) {
    const head = element("tr", {}, element("th", {}, "true \\ given"),
      Array.from({ length: classes }, (_, k) => element("th", {}, k)));
    const rows = Array.from({ length: classes }, (_, r) => {
      const row = matrix.subarray(r * classes, (r + 1) * classes);
      const total = row.reduce((a, b) => a + b, 0) || 1;
      return element("tr", {}, element("th", {}, r), Array.from(row, (count, c) => element("td", {
        style: `background:${c === r ? `rgba(46,139,87,${count / total})` :
                                       `rgba(213,94,0,${Math.min(1, 2 * count / total)})`}`,
      }, count)));
    });
    return element("table", { class: "confusion" }, element("thead", {}, head),
                   element("tbody", {}, rows));
  }

  function showSeed(study, index) {
    const seed = study.first_seed + index;
    const panels = study.arms.map((arm) => {
      const kind = arm.outcomes[index];
      return element("div", { class: `close-up outcome-${kind}` },
        element("h3", {}, arm.name),
        element("p", {}, `${playground.outcomeLabel(study, kind)}: test accuracy ` +
                         `${percent(arm.test_accuracy.values[index])}`),
        element("p", { class: "note" }, "Confusion matrix on the test set:"),
        confusion(arm.confusion.row(index), study.classes));
    });
    const loss = element("canvas", { width: 420, height: 240 });
    playground.logChart(loss, playground.epochsOf(study), study.arms.map((arm, a) => ({
      values: arm.loss.row(index), colour: COLOURS[a], width: 2,
    })), "epoch", `${study.loss_name} loss`);
    const accuracy = element("canvas", { width: 420, height: 240 });
    playground.logChart(accuracy, study.evaluated, study.arms.map((arm, a) => ({
      values: Array.from(arm.test_curve.row(index), (v) => 1 - v), colour: COLOURS[a], width: 2,
    })), "epoch", "test error (1 - accuracy)");
    const key = study.arms.map((arm, a) => element("span", { style: `color:${COLOURS[a]}` },
                                                   `— ${arm.name} `));
    const section = document.getElementById("detail");
    section.replaceChildren(
      element("h2", { id: "detail-title" }, `Seed ${seed}`),
      element("button", { type: "button", class: "close" }, "close"),
      element("div", { class: "close-ups" }, panels,
              element("figure", {}, loss, element("figcaption", {}, "training loss: ", key)),
              element("figure", {}, accuracy, element("figcaption", {}, "test error: ", key))));
    section.querySelector(".close").addEventListener("click", () => { section.hidden = true; });
    section.hidden = false;
    section.scrollIntoView({ block: "nearest" });
  }

  Object.assign(playground, { classNumbers: numbers, accuracyBar, accuracyGrids: grids,
                              showClassSeed: showSeed });
})(window.playground);
