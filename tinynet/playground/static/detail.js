// One seed up close: its training replayed (watch.js), its boundary large for A and B, its
// loss curves, and its weights as initialised and as trained.
"use strict";

(function (playground) {
  const { element, thousands } = playground;
  // A's and B's colours wherever the two are told apart: magenta and teal, a pair apart from
  // the output's blue-to-orange scale and the outcomes' frames (green, amber, vermilion,
  // purple, black).
  const COLOURS = ["rgb(194,24,91)", "rgb(0,131,143)"];

  const fixed = (v) => (Math.abs(v) < 0.0005 ? 0 : v).toFixed(3);  // no "-0.000"

  // The weights of one network, packed as the library packs them (per layer W, then b), and
  // its residual blocks' LayerNorm gains and biases and trained α.
  function weights(study, values) {
    const blocks = study.block_parameters.map(([name, at, size]) =>
      element("table", { class: "weights" }, element("caption", {}, `${name} (${size})`),
        element("tbody", {}, element("tr", {},
          Array.from({ length: size }, (_, k) => element("td", {}, fixed(values[at + k])))))));
    return [...dense(study, values), ...blocks];
  }

  function dense(study, values) {
    return study.table.map(([nIn, nOut, wAt, bAt], layer) => {
      const rows = [];
      for (let o = 0; o < nOut; o++) {
        const cells = [];
        for (let i = 0; i < nIn; i++) cells.push(element("td", {}, fixed(values[wAt + o * nIn + i])));
        cells.push(element("td", { class: "bias" }, fixed(values[bAt + o])));
        rows.push(element("tr", {}, cells));
      }
      return element("table", { class: "weights" },
        element("caption", {}, `layer ${layer + 1}: W (${nOut} x ${nIn}) | b`),
        element("tbody", {}, rows));
    });
  }

  function show(study, index) {
    if (study.kind === "classes") { playground.showClassSeed(study, index); return; }
    const seed = study.first_seed + index;
    const { resolution, not_finite: notFinite, extent } = study.grid;
    const panels = study.arms.map((arm) => {
      const canvas = element("canvas", { width: 300, height: 300, class: "large" });
      playground.drawBoundary(canvas, arm.boundaries.row(index), resolution, notFinite,
                              study.data, extent,
                              playground.pointRadius(study.data.X.length, 300));
      const kind = arm.outcomes[index];
      const epoch = arm.solved_epochs[index];
      return element("div", { class: `close-up outcome-${kind}` },
        element("h3", {}, arm.name),
        element("p", {}, playground.outcomeLabel(study, kind) +
                (epoch >= 0 ? ` from epoch ${thousands(epoch)}` : "")),
        canvas,
        element("details", { open: true }, element("summary", {}, "weights as initialised"),
                weights(study, arm.initial.row(index))),
        element("details", { open: true }, element("summary", {}, "weights as trained"),
                weights(study, arm.trained.row(index))));
    });
    const chart = element("canvas", { width: 480, height: 260 });
    playground.logChart(chart, playground.epochsOf(study), study.arms.map((arm, a) => ({
      values: arm.loss.row(index), colour: COLOURS[a], width: 2,
    })), "epoch", `${study.loss_name} loss`);
    const key = study.arms.map((arm, a) => element("span", { style: `color:${COLOURS[a]}` }, `— ${arm.name} `));
    const section = document.getElementById("detail");
    const watch = element("div", { id: "watch" });
    section.replaceChildren(
      element("h2", { id: "detail-title" }, `Seed ${seed}`),
      element("button", { type: "button", class: "close" }, "close"),
      element("h3", {}, "Its training, replayed"), watch,
      element("h3", {}, "As trained, and its weights"),
      element("div", { class: "close-ups" }, panels,
              element("figure", {}, chart, element("figcaption", {}, key))));
    if (playground.live) playground.watchSeed(study, index, watch);
    else watch.append(element("p", { class: "note" }, "Replaying a seed's training needs the " +
                                     "server: python -m tinynet.playground."));
    section.querySelector(".close").addEventListener("click", () => { section.hidden = true; });
    section.hidden = false;
    section.scrollIntoView({ block: "nearest" });
  }

  Object.assign(playground, { showSeed: show, ARM_COLOURS: COLOURS });
})(window.playground);
