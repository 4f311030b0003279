// The form: its menus from the server's choices, its fields to and from the page's address
// (so a link reproduces the page), and the server's message beside each refused field.
"use strict";

(function (playground) {
  const form = () => document.getElementById("form");
  let switchedOn = ["1"];  // the words that tick a checkbox: the server's, once it says

  // Fill the menus and the fields: from the address where it gives them, else the defaults.
  function setUp(options) {
    switchedOn = options.true;
    for (const [name, names] of Object.entries(options.choices)) {
      const select = form().elements[name];
      for (const value of names) select.append(playground.element("option", { value }, value));
    }
    // the limits in words beside the fields they bound
    const limits = { epochs: `1 to ${playground.thousands(options.limits.epochs)}`,
                     seeds: `1 to ${playground.thousands(options.limits.seeds)}` };
    for (const [name, words] of Object.entries(limits)) {
      const field = form().elements[name];
      field.before(playground.element("span", { class: "limit" }, ` (${words})`));
    }
    const given = new URLSearchParams(window.location.search);
    write({ ...options.defaults, ...Object.fromEntries(given) });
  }

  // The fields as the server reads them: every one as text.
  function read() {
    const fields = {};
    for (const element of form().elements) {
      if (!element.name) continue;
      fields[element.name] = element.type === "checkbox" ? (element.checked ? "1" : "0")
                                                          : element.value;
    }
    return fields;
  }

  function write(fields) {
    for (const [name, value] of Object.entries(fields)) {
      const element = form().elements[name];
      if (!element) continue;
      if (element.type === "checkbox") element.checked = switchedOn.includes(value.trim().toLowerCase());
      else if (element.tagName === "SELECT" && ![...element.options].some((o) => o.value === value)) {
        element.append(playground.element("option", { value }, value));  // shown, then refused
        element.value = value;
      } else element.value = value;
    }
  }

  // Put the fields in the address (without the defaults, as the server wrote `query`).
  function remember(query) {
    const address = window.location.pathname + (query ? "?" + query : "");
    window.history.replaceState(null, "", address);
  }

  // One line beside each refused field; none elsewhere.
  function showErrors(errors) {
    for (const element of form().elements) {
      if (!element.name) continue;
      element.toggleAttribute("aria-invalid", element.name in errors);
      const label = element.closest("label");
      let message = label.querySelector(".error");
      if (!message) {
        message = playground.element("span", { class: "error", "data-error-for": element.name });
        label.append(message);
      }
      message.textContent = errors[element.name] || "";
    }
    document.querySelector('[data-error-for="study"]').textContent = errors.study || "";
  }

  Object.assign(playground, { setUpForm: setUp, readForm: read, writeForm: write,
                              rememberForm: remember, showErrors });
})(window.playground);
