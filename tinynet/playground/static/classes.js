// A study on a task with a test set (the digits, MNIST-1D): each seed's test accuracy as a
// tile for results.js's grids, with its colour bar, and one seed up close: its confusion
// matrix on the test set and its curves.
"use strict";

(function (playground) {
  const { element, percent } = playground;

  // Grey (chance or below) to green (every test sample right): a test accuracy's colour.
  function shade(accuracy, chance) {
    const t = Math.min(1, Math.max(0, (accuracy - chance) / (1 - chance)));
    const from = [225, 225, 225], to = [46, 139, 87];
    return `rgb(${from.map((c, k) => Math.round(c + (to[k] - c) * t)).join(",")})`;
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

  // A seed's test accuracy as a shaded square with the percentage on it.
  function accuracyTile(study, arm, index, size) {
    const accuracy = arm.test_accuracy.values[index];
    const canvas = element("canvas", { width: size, height: size });
    const context = canvas.getContext("2d");
    context.fillStyle = shade(accuracy, 1 / study.classes);
    context.fillRect(0, 0, size, size);
    context.fillStyle = "#111";
    context.font = `${Math.round(size / 3)}px sans-serif`;
    context.textAlign = "center";
    context.textBaseline = "middle";
    context.fillText(Math.round(100 * accuracy), size / 2, size / 2);
    return canvas;
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
    const COLOURS = playground.ARM_COLOURS;  // A's and B's, as detail.js draws them
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

  Object.assign(playground, { accuracyBar, accuracyTile, showClassSeed: showSeed });
})(window.playground);
