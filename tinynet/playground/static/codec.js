// Reading the server's data: packed arrays (base64 bytes) into typed arrays, and numbers
// into text the way the library's reports write them.
"use strict";
window.playground = window.playground || {};

(function (playground) {
  const TYPES = { uint8: Uint8Array, uint16: Uint16Array, float32: Float32Array,
                  float64: Float64Array };

  // {dtype, shape, base64} -> {values: typed array, shape}; row(i) is the i-th slice.
  function unpack(packed) {
    const text = atob(packed.base64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    const values = new TYPES[packed.dtype](bytes.buffer);
    const rowSize = packed.shape.slice(1).reduce((a, b) => a * b, 1);
    return {
      values, shape: packed.shape,
      row: (i) => values.subarray(i * rowSize, (i + 1) * rowSize),
    };
  }

  const percent = (x) => (100 * x).toFixed(1) + " %";
  const interval = (pair) => `[${(100 * pair[0]).toFixed(1)}, ${(100 * pair[1]).toFixed(1)}]`;
  const thousands = (n) => n.toLocaleString("en-US");
  const duration = (s) => (s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(1)} s`);

  // An element with attributes and children (strings become text).
  function element(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value);
    }
    for (const child of children.flat()) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  Object.assign(playground, { unpack, percent, interval, thousands, duration, element });
})(window.playground);
