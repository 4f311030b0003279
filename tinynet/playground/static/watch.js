// One seed watched, as TensorFlow Playground shows one network: the server trains the seed
// again for A and B, recording ~40 snapshots (tinynet.snapshots.fit_snapshots); here every
// snapshot is drawn: each hidden unit as a small map of its output over the plane, the
// weights as lines whose width is their size and whose colour their sign, the output map with
// the data, and the epoch, loss and accuracy. A scrubber (and Play) moves through them.
"use strict";

(function (playground) {
  const { element, thousands } = playground;
  // SVG's namespace, as the HTML parser gives it to an <svg> (the page names no address)
  const SVG = (() => {
    const holder = document.createElement("div");
    holder.innerHTML = "<svg></svg>";
    return holder.firstChild.namespaceURI;
  })();
  const POLL_MS = 150, PLAY_MS = 120;
  const COLUMN = 96, OUTPUT = 150, HEIGHT = 300, TOP = 18;
  let watching = 0;  // the number of the latest watch asked for; older answers are dropped
  let playing = null;

  const svg = (tag, attributes) => {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    return node;
  };

  // A line's width in pixels for a weight of size |w|: 0.5 px at 0, 6 px from |w| = 3 on.
  const lineWidth = (w) => (Number.isFinite(w) ? 0.5 + 5.5 * Math.min(1, Math.abs(w) / 3) : 6);
  // A weight's colour: the output's scale, its sign (orange: towards 1, blue: towards 0).
  function lineColour(w) {
    if (!Number.isFinite(w)) return "rgb(150,150,150)";
    const [r, g, b] = playground.outputColour(Math.round(125 + 125 * Math.max(-1, Math.min(1, w))));
    return `rgb(${r},${g},${b})`;
  }

  // Paint `bytes` (size x size) on a canvas of that many pixels, each its colour exactly.
  function paint(canvas, bytes, size, notFinite) {
    const image = new ImageData(size, size);
    for (let k = 0; k < size * size; k++) {
      image.data.set([...playground.outputColour(bytes[k], notFinite), 255], 4 * k);
    }
    canvas.getContext("2d").putImageData(image, 0, 0);
  }

  // Where each position's units sit: x of the column, y of each unit, and the node size.
  function geometry(watch) {
    const columns = watch.widths.map((width, p) => {
      const shown = p === 0 || p === watch.widths.length - 1 ? width :
        Math.min(width, watch.max_units);
      const node = p === watch.widths.length - 1 ? OUTPUT :
        Math.max(12, Math.min(40, Math.floor((HEIGHT - 2 * TOP) / shown) - 6));
      const step = (HEIGHT - 2 * TOP) / shown;
      const ys = Array.from({ length: shown }, (_, u) => TOP + step * (u + 0.5));
      return { x: 30 + COLUMN * p, ys, node, shown, width };
    });
    const last = columns[columns.length - 1];
    last.ys = [HEIGHT / 2];
    return { columns, width: last.x + OUTPUT + 10 };
  }

  // One arm's network at snapshot 0, its parts kept to be redrawn at every snapshot.
  function network(watch, arm, a) {
    const { columns, width } = geometry(watch);
    const box = element("div", { class: "network", id: `network-${"ab"[a]}`,
                                 style: `width:${width}px;height:${HEIGHT}px` });
    const lines = svg("svg", { width, height: HEIGHT, class: "weights" });
    box.append(lines);
    const drawn = { lines: [], units: [], output: null, overlay: null };
    if (watch.chain) {
      watch.table.forEach(([nIn, nOut, wAt], layer) => {
        const from = columns[layer], to = columns[layer + 1];
        for (let o = 0; o < to.shown; o++) {
          for (let i = 0; i < from.shown; i++) {
            const line = svg("line", {
              x1: from.x + (layer === 0 ? 12 : from.node / 2), y1: from.ys[i],
              x2: to.x - (layer + 1 === columns.length - 1 ? 0 : to.node / 2),
              y2: to.ys[Math.min(o, to.ys.length - 1)],
              "data-layer": layer, "data-from": i, "data-to": o,
            });
            lines.append(line);
            drawn.lines.push({ line, at: wAt + o * nIn + i });
          }
        }
      });
    }
    columns[0].ys.forEach((y, i) => box.append(element("span", {
      class: "input", style: `left:${columns[0].x - 12}px;top:${y - 10}px` }, `x${"₁₂"[i] || i + 1}`)));
    const r = watch.grid.unit_resolution;
    columns.slice(1, -1).forEach((column, p) => {
      drawn.units[p] = column.ys.map((y, u) => {
        const canvas = element("canvas", {
          width: r, height: r, class: "unit", "data-position": p, "data-unit": u,
          style: `left:${column.x - column.node / 2}px;top:${y - column.node / 2}px;` +
                 `width:${column.node}px;height:${column.node}px`,
        });
        box.append(canvas);
        return canvas;
      });
      if (column.width > column.shown) {
        box.append(element("span", { class: "more", style: `left:${column.x - 20}px;top:${HEIGHT - 16}px` },
                           `+${column.width - column.shown} more`));
      }
    });
    const out = columns[columns.length - 1];
    const size = watch.grid.resolution;
    const place = `left:${out.x}px;top:${HEIGHT / 2 - OUTPUT / 2}px;width:${OUTPUT}px;height:${OUTPUT}px`;
    drawn.output = element("canvas", { width: size, height: size, class: "output-map", style: place });
    drawn.overlay = element("canvas", { width: 2 * OUTPUT, height: 2 * OUTPUT, class: "overlay", style: place });
    box.append(drawn.output, drawn.overlay);
    return { box, drawn };
  }

  // Redraw arm `arm`'s network `drawn` at snapshot `t`.
  function drawSnapshot(watch, arm, drawn, t) {
    const theta = arm.theta.row(t);
    for (const { line, at } of drawn.lines) {
      const w = theta[at];
      line.setAttribute("stroke", lineColour(w));
      line.setAttribute("stroke-width", lineWidth(w).toFixed(3));
      line.dataset.value = String(w);
    }
    const { unit_resolution: r, resolution, not_finite: notFinite, extent } = watch.grid;
    drawn.units.forEach((canvases, p) => {
      const maps = arm.units[p].row(t), scales = arm.unit_scales[p].row(t);
      canvases.forEach((canvas, u) => {
        paint(canvas, maps.subarray(u * r * r, (u + 1) * r * r), r, notFinite);
        canvas.title = `unit ${u + 1}: its output, scaled by its largest here (${scales[u].toPrecision(3)})`;
      });
    });
    const output = arm.output.row(t);
    paint(drawn.output, output, resolution, notFinite);
    const context = drawn.overlay.getContext("2d");
    context.clearRect(0, 0, drawn.overlay.width, drawn.overlay.height);
    playground.drawContour(drawn.overlay, output, resolution);
    playground.drawPoints(drawn.overlay, watch.data, extent, resolution, 3.5);
  }

  // The text under the scrubber for snapshot `t`: the epoch, and each arm's loss and accuracy.
  function caption(watch, t) {
    const last = watch.epochs[watch.epochs.length - 1];
    const parts = watch.arms.map((arm) => {
      const loss = arm.loss[t] === null ? "not finite" : arm.loss[t].toPrecision(3);
      return `${arm.name}: ${watch.loss_name} loss ${loss}, ` +
             `${playground.percent(arm.accuracy[t])} of the training points right`;
    });
    return `epoch ${thousands(watch.epochs[t])} of ${thousands(last)} · ${parts.join(" · ")}`;
  }

  // The replay in `container`: A's and B's networks side by side, one scrubber for both.
  function show(watch, container) {
    for (const arm of watch.arms) {
      for (const name of ["theta", "output"]) arm[name] = playground.unpack(arm[name]);
      arm.units = arm.units.map(playground.unpack);
      arm.unit_scales = arm.unit_scales.map(playground.unpack);
    }
    const networks = watch.arms.map((arm, a) => network(watch, arm, a));
    const scrub = element("input", { type: "range", id: "scrub", min: 0,
                                     max: watch.epochs.length - 1, value: 0, step: 1,
                                     "aria-label": "snapshot" });
    const play = element("button", { type: "button", id: "play" }, "Play");
    const text = element("p", { id: "watch-epoch", class: "watch-epoch" });
    const update = () => {
      const t = Number(scrub.value);
      watch.arms.forEach((arm, a) => drawSnapshot(watch, arm, networks[a].drawn, t));
      text.textContent = caption(watch, t);
      container.dataset.snapshot = t;
      container.dataset.epoch = watch.epochs[t];
    };
    scrub.addEventListener("input", update);
    play.addEventListener("click", () => {
      if (playing !== null) { clearInterval(playing); playing = null; play.textContent = "Play"; return; }
      if (Number(scrub.value) === watch.epochs.length - 1) scrub.value = 0;
      play.textContent = "Pause";
      playing = setInterval(() => {
        if (Number(scrub.value) >= watch.epochs.length - 1) { play.click(); return; }
        scrub.value = Number(scrub.value) + 1;
        update();
      }, PLAY_MS);
    });
    container.replaceChildren(
      element("div", { class: "networks" }, watch.arms.map((arm, a) =>
        element("figure", { class: `arm-${"ab"[a]}` }, element("figcaption", {}, arm.name),
                networks[a].box))),
      element("div", { class: "scrubber" }, play, scrub), text,
      element("p", { class: "note" }, "Seed " + watch.seed + " trained again from its " +
        "initial weights with the study's settings, its weights recorded after " +
        `${watch.epochs.length - 1} epochs spaced thick at the start. A hidden unit's map: ` +
        "its output over the plane, scaled by its largest (white: 0). A line: a weight, as " +
        "wide as its size (6 px from 3 on), orange positive, blue negative. The output map: " +
        "the network's output, 0 blue to 1 orange."));
    update();
  }

  // Ask the server to watch seed `index` of `study`, and show it in `container` once trained.
  async function watchSeed(study, index, container) {
    const number = ++watching;
    if (playing !== null) { clearInterval(playing); playing = null; }
    const seed = study.first_seed + index;
    container.replaceChildren(element("p", { class: "note", id: "watch-status" },
      `Training seed ${seed} again to replay its training…`));
    const post = await fetch("api/watch", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...study.fields, seed: String(seed) }) });
    const job = await post.json();
    if (!post.ok) {
      container.querySelector("#watch-status").textContent =
        `Cannot replay this seed: ${Object.values(job.errors || { e: job.error }).join("; ")}`;
      return;
    }
    for (;;) {
      const state = await (await fetch(`api/studies/${job.id}`)).json();
      if (number !== watching) return;
      if (state.state === "done") break;
      if (!["queued", "running", "compiling", "cancelling"].includes(state.state)) {
        container.querySelector("#watch-status").textContent = `The replay ${state.state}` +
          (state.error ? `: ${state.error}` : "") + ".";
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const watch = await (await fetch(`api/studies/${job.id}/result`)).json();
    if (number === watching) show(watch, container);
  }

  Object.assign(playground, { watchSeed, lineWidth });
})(window.playground);
