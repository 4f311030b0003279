// Line charts on a canvas: loss curves on a log scale, with axes and their ticks.
"use strict";

(function (playground) {
  const MARGIN = { left: 48, right: 24, top: 10, bottom: 30 };

  // Powers of ten from below `low` to above `high` (at most 8 of them).
  function decades(low, high) {
    const from = Math.floor(Math.log10(low)), to = Math.ceil(Math.log10(high));
    const step = Math.max(1, Math.ceil((to - from) / 7));
    const ticks = [];
    for (let k = from; k <= to; k += step) ticks.push(k);
    return ticks;
  }

  // Up to about 5 round numbers from 0 to `last`.
  function roundTicks(last) {
    const step0 = 10 ** Math.floor(Math.log10(Math.max(1, last / 4)));
    const step = [1, 2, 5, 10].map((k) => k * step0).find((s) => last / s <= 5);
    const ticks = [];
    for (let x = 0; x <= last + 1e-9; x += step) ticks.push(x);
    return ticks;
  }

  // Draw `series` ([{values, colour, width}], values per x of `xs`) with a log y axis, x from 0.
  // Values that are not finite or not positive are gaps.
  function logChart(canvas, xs, series, xLabel, yLabel) {
    const context = canvas.getContext("2d");
    const width = canvas.width, height = canvas.height;
    context.clearRect(0, 0, width, height);
    let low = Infinity, high = -Infinity;
    for (const { values } of series) {
      for (const v of values) {
        if (v > 0 && Number.isFinite(v)) { low = Math.min(low, v); high = Math.max(high, v); }
      }
    }
    if (!Number.isFinite(low)) { low = 1e-3; high = 1; }
    const ticks = decades(low, high);
    const yLow = ticks[0], yHigh = Math.max(ticks[ticks.length - 1], yLow + 1);
    const plotWidth = width - MARGIN.left - MARGIN.right;
    const plotHeight = height - MARGIN.top - MARGIN.bottom;
    const last = xs[xs.length - 1];
    const px = (x) => MARGIN.left + x / Math.max(1, last) * plotWidth;
    const py = (v) => MARGIN.top + (yHigh - Math.log10(v)) / (yHigh - yLow) * plotHeight;
    context.font = "12px sans-serif";
    context.fillStyle = "#444";
    context.strokeStyle = "#ddd";
    context.lineWidth = 1;
    context.textAlign = "right";
    context.textBaseline = "middle";
    for (const k of ticks) {
      const y = py(10 ** k);
      context.beginPath(); context.moveTo(MARGIN.left, y); context.lineTo(width - MARGIN.right, y);
      context.stroke();
      context.fillText(`1e${k}`, MARGIN.left - 4, y);
    }
    context.textAlign = "center";
    context.textBaseline = "top";
    for (const x of roundTicks(last)) {
      context.fillText(playground.thousands(x), px(x), height - MARGIN.bottom + 4);
    }
    context.fillText(xLabel, MARGIN.left + plotWidth / 2, height - 13);
    context.save();
    context.translate(10, MARGIN.top + plotHeight / 2);
    context.rotate(-Math.PI / 2);
    context.fillText(yLabel, 0, -6);
    context.restore();
    for (const { values, colour, width: lineWidth } of series) {
      context.strokeStyle = colour;
      context.lineWidth = lineWidth;
      context.beginPath();
      let drawing = false;
      values.forEach((v, i) => {
        if (!(v > 0 && Number.isFinite(v))) { drawing = false; return; }
        const x = px(xs[i]), y = py(Math.min(Math.max(v, 10 ** yLow), 10 ** yHigh));
        if (drawing) context.lineTo(x, y); else context.moveTo(x, y);
        drawing = true;
      });
      context.stroke();
    }
  }

  Object.assign(playground, { logChart });
})(window.playground);
