// The page: with a server, it fills the form from its address and waits for Train, which
// sends the form; the status follows the study until it is done, stopped or refused, and the
// results replace the last ones; inside a downloaded HTML file, the study it holds is shown
// as it was.
"use strict";

(function (playground) {
  const POLL_MS = 150;
  const status = (text) => { document.getElementById("status").textContent = text; };
  let current = null;  // the id of the study this page waits for; others are ignored

  async function request(address, fields) {
    const options = fields === undefined ? {} : {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(fields),
    };
    const response = await fetch(address, options);
    return { ok: response.ok, body: await response.json() };
  }

  function describe(job) {
    if (job.state === "queued") {
      return "Queued: the trainer is finishing the job before it (or a kernel compiling in " +
             "the background).";
    }
    if (job.state === "compiling") {
      const c = job.compiling;
      return `Compiling a kernel for ${c.what}: the first study of this layout only ` +
             `(${c.usually}); ${Math.round(c.seconds)} s so far.`;
    }
    if (job.state === "running") {
      const done = job.epochs_done === job.epochs ? "finishing" :
        `${playground.thousands(job.epochs_done)} of ${playground.thousands(job.epochs)} epochs`;
      return `Training ${"AB"[job.arm]} (${job.arm + 1} of ${job.arms}): ${done}.`;
    }
    if (job.state === "cancelling") return "Stopping after the current chunk of training…";
    if (job.state === "cancelled" && job.background) {
      return `Stopped. The kernel for ${job.background} is still compiling in the ` +
             "background; the next study will use it (and waits for it).";
    }
    if (job.state === "cancelled") return "Stopped.";
    if (job.state === "failed") return `Failed: ${job.error}`;
    return job.state;
  }

  function running(yes) {
    document.getElementById("stop").disabled = !yes;
    document.getElementById("progress").hidden = !yes;
  }

  // The fraction of the study's epochs done: arms one after the other.
  function progress(job) {
    const done = job.state === "done" ? 1 : (job.arm * job.epochs + job.epochs_done) / (job.arms * job.epochs);
    document.getElementById("progress").value = done;
  }

  async function train() {
    const fields = playground.readForm();
    const answer = await request("api/studies", fields);
    if (answer.ok && current !== null && answer.body.id < current) return;  // an older Train's
    if (!answer.ok) {
      playground.showErrors(answer.body.errors || { study: answer.body.error });
      status("Not started: see the message beside the field.");
      return;
    }
    playground.showErrors({});
    playground.rememberForm(answer.body.query);
    current = answer.body.id;
    running(true);
    follow(current);
  }

  async function follow(id) {
    try {
      await poll(id);
    } catch (error) {
      if (id === current) {
        status(`Lost the study: ${error.message}`);
        running(false);
      }
    }
  }

  async function poll(id) {
    while (id === current) {
      const { body: job } = await request(`api/studies/${id}`);
      if (id !== current) return;
      status(describe(job));
      progress(job);
      if (job.state === "done") {
        const { ok, body: study } = await request(`api/studies/${id}/result`);
        if (id !== current) return;
        if (!ok) throw new Error(study.error);
        show(study);
        document.getElementById("download-json").href = `api/studies/${id}/study.json`;
        document.getElementById("download-html").href = `api/studies/${id}/study.html`;
        document.querySelector(".downloads").hidden = false;
        status(`Done: ${playground.thousands(study.seeds)} seeds per initializer in ` +
               `${playground.duration(job.seconds)}.`);
      }
      if (!["queued", "running", "compiling", "cancelling"].includes(job.state)) {
        running(false);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  function show(study) {
    const decoded = playground.decodeStudy(study);
    document.getElementById("detail").hidden = true;
    playground.showStudy(decoded, (index) => playground.showSeed(decoded, index));
  }

  let checking = null;
  function checkSoon() {  // the server's checks as the user types, a moment after the last key
    clearTimeout(checking);
    checking = setTimeout(async () => {
      const answer = await request("api/check", playground.readForm());
      playground.showErrors(answer.body.errors || {});
    }, 300);
  }

  async function live() {
    playground.live = true;  // a server to ask: a seed clicked is replayed (watch.js)
    const { body: options } = await request("api/options");
    playground.setUpForm(options);
    const form = document.getElementById("form");
    form.addEventListener("submit", (event) => { event.preventDefault(); train(); });
    form.addEventListener("input", checkSoon);
    document.getElementById("stop").addEventListener("click", async () => {
      if (current !== null) await request(`api/studies/${current}/stop`, {});
    });
    // Only the user's Train starts a study: a link (or another site) can fill the form but
    // not spend this machine's time, nor cancel the study the user is running elsewhere.
    status("Press Train to run this study.");
    checkSoon();
  }

  // A downloaded page: the study inside it, the form showing its settings, nothing to run.
  function saved(data) {
    const study = JSON.parse(data.textContent);
    playground.writeForm(study.fields);
    for (const element of document.getElementById("form").elements) element.disabled = true;
    document.querySelector(".buttons").hidden = true;
    status("A saved study: run `python -m tinynet.playground` to train new ones.");
    show(study);
  }

  const data = document.getElementById("study-data");
  if (data) saved(data); else live();
})(window.playground);
