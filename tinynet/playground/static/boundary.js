// A decision boundary: the network's output on a grid, painted from blue (0) through white
// (0.5) to orange (1), the 0.5 line traced by marching squares, and the training points. The
// output's scale alone: A and B have their own colours (detail.js's ARM_COLOURS).
"use strict";

(function (playground) {
  const LOW = [49, 104, 176], MIDDLE = [247, 247, 247], HIGH = [227, 119, 24];
  const NOT_FINITE = [150, 150, 150];
  const POINT_LOW = "rgb(20,60,120)", POINT_HIGH = "rgb(170,70,0)";  // darker: seen on the map

  function colour(byte, notFinite) {
    if (byte === notFinite) return NOT_FINITE;
    const p = byte / 250;
    const [from, to, t] = p < 0.5 ? [LOW, MIDDLE, p * 2] : [MIDDLE, HIGH, p * 2 - 1];
    return from.map((c, k) => Math.round(c + (to[k] - c) * t));
  }

  // The 0.5 crossing of a grid of bytes, as segments in grid coordinates (x right, y down).
  function contour(values, size) {
    const level = 125, segments = [];
    const at = (i, j) => values[i * size + j];
    const cross = (a, b) => (level - a) / (b - a);
    for (let i = 0; i + 1 < size; i++) {
      for (let j = 0; j + 1 < size; j++) {
        const corners = [at(i, j), at(i, j + 1), at(i + 1, j + 1), at(i + 1, j)];
        if (corners.some((v) => v === 255)) continue;
        const points = [];
        const edges = [[0, 1, (t) => [j + t, i]], [1, 2, (t) => [j + 1, i + t]],
                       [3, 2, (t) => [j + t, i + 1]], [0, 3, (t) => [j, i + t]]];
        for (const [a, b, place] of edges) {
          if ((corners[a] > level) !== (corners[b] > level)) {
            points.push(place(cross(corners[a], corners[b])));
          }
        }
        for (let k = 0; k + 1 < points.length; k += 2) segments.push([points[k], points[k + 1]]);
      }
    }
    return segments;
  }

  // The 0.5 line of `values` (size x size bytes) on `canvas`, the grid's cells scaled to it.
  function drawContour(canvas, values, size) {
    const context = canvas.getContext("2d");
    const scale = canvas.width / size;  // grid point k: the centre of the k-th cell
    context.strokeStyle = "#222";
    context.lineWidth = Math.max(1, canvas.width / 120);
    context.beginPath();
    for (const [[x0, y0], [x1, y1]] of contour(values, size)) {
      context.moveTo((x0 + 0.5) * scale, (y0 + 0.5) * scale);
      context.lineTo((x1 + 0.5) * scale, (y1 + 0.5) * scale);
    }
    context.stroke();
  }

  // The training points (X, y) over `extent` on `canvas`, where a grid of `size` points per
  // side spans it: each a dot of its class's colour, ringed in white.
  function drawPoints(canvas, data, extent, size, radius) {
    const context = canvas.getContext("2d");
    const scale = canvas.width / size;
    const [x0, x1, y0, y1] = extent;
    // the grid's first and last points are the extent's edges: cell centres
    const px = (x) => ((x - x0) / (x1 - x0) * (size - 1) + 0.5) * scale;
    const py = (y) => ((y1 - y) / (y1 - y0) * (size - 1) + 0.5) * scale;
    context.lineWidth = Math.max(0.5, radius / 3);
    context.strokeStyle = "#fff";
    data.X.forEach(([x, y], i) => {
      context.beginPath();
      context.arc(px(x), py(y), radius, 0, 2 * Math.PI);
      context.fillStyle = data.y[i] > 0.5 ? POINT_HIGH : POINT_LOW;
      context.fill();
      context.stroke();
    });
  }

  // How large a training point is drawn on a canvas `width` pixels wide: large for XOR's
  // four, small for a few hundred, never less than 1.2 pixels.
  function pointRadius(count, width) {
    return Math.max(1.2, width / (count <= 16 ? 22 : count <= 300 ? 70 : 110));
  }

  // Paint `values` (size x size bytes) on `canvas`, with its 0.5 line and the data (X, y)
  // over `extent` (none if `radius` is 0).
  function draw(canvas, values, size, notFinite, data, extent, radius) {
    const image = new ImageData(size, size);
    for (let k = 0; k < size * size; k++) {
      const [r, g, b] = colour(values[k], notFinite);
      image.data.set([r, g, b, 255], 4 * k);
    }
    const small = document.createElement("canvas");
    small.width = small.height = size;
    small.getContext("2d").putImageData(image, 0, 0);
    const context = canvas.getContext("2d");
    context.imageSmoothingEnabled = true;
    context.drawImage(small, 0, 0, canvas.width, canvas.height);
    drawContour(canvas, values, size);
    if (radius > 0) drawPoints(canvas, data, extent, size, radius);
  }

  // A colour bar of the output, 0 to 1, with the 0.5 line marked.
  function colourBar() {
    const canvas = playground.element("canvas", { width: 200, height: 12, class: "colour-bar" });
    const context = canvas.getContext("2d");
    for (let x = 0; x < 200; x++) {
      const [r, g, b] = colour(Math.round((x / 199) * 250), -1);
      context.fillStyle = `rgb(${r},${g},${b})`;
      context.fillRect(x, 0, 1, 12);
    }
    context.fillStyle = "#222";
    context.fillRect(99, 0, 2, 12);
    return playground.element("span", { class: "bar" }, "output 0 ", canvas,
                              " 1 (the line: 0.5; grey: not finite)");
  }

  Object.assign(playground, { drawBoundary: draw, drawContour, drawPoints, pointRadius,
                              outputColour: colour, colourBar });
})(window.playground);
