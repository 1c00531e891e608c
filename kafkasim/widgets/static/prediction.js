// kafkasim's prediction (issue 33): an anywidget ES module shipped in the package (no CDN).
// Python owns the state: the question, the kind ("choice", "number", "offsets"), the choices
// (translated labels), "shown" (the locked-in answer as text, "" when unanswered) and "locked"
// (the run cell has started). "Lock in" sends {action: "lock", value}; Python checks the value
// and answers with "shown" or an "error". "Change" ({action: "change"}) reopens the answer until
// the run cell locks it. Words come from the "strings" trait (English -> the course's language).

function translator(strings) {
  const table = strings || {};
  return (key, fields = {}) => String(table[key] != null ? table[key] : key)
    .replace(/\{(\w+)\}/g, (m, k) => (k in fields ? String(fields[k]) : m));
}

function el(tag, attrs = {}, parent = null) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  if (parent) parent.appendChild(e);
  return e;
}

let serial = 0;

export default {
  render({model, el: root}) {
    const T = translator(model.get("strings"));
    const name = `ks-predict-${++serial}`;
    const box = el("div", {class: "ks-predict", role: "group",
                           "aria-label": T("Prediction: answer, then press Lock in")}, root);
    el("div", {class: "ks-predict-label", text: T("Your prediction")}, box);
    el("div", {class: "ks-predict-question", text: model.get("question")}, box);
    const form = el("div", {class: "ks-predict-form"}, box);
    const kind = model.get("kind");
    let input = null;
    const radios = [];
    if (kind === "choice") {
      model.get("choices").forEach((label, i) => {
        const row = el("label", {class: "ks-predict-choice"}, form);
        const r = el("input", {type: "radio", name, value: String(i)}, row);
        el("span", {text: label}, row);
        radios.push(r);
      });
    } else {
      const hint = kind === "number" ? T("a whole number, e.g. 3")
        : T("offsets separated by commas, e.g. 0, 1, 2");
      input = el("input", {class: "ks-predict-input", type: "text", placeholder: hint,
                           "aria-label": hint, inputmode: kind === "number" ? "numeric" : "text"},
                 form);
    }
    const bar = el("div", {class: "ks-predict-bar"}, box);
    const lock = el("button", {class: "ks-predict-lock", text: T("Lock in")}, bar);
    const change = el("button", {class: "ks-predict-change", text: T("Change")}, bar);
    const status = el("span", {class: "ks-predict-status", role: "status",
                               "aria-live": "polite"}, bar);
    const error = el("div", {class: "ks-predict-error", role: "alert"}, box);

    const send = () => {
      let value;
      if (kind === "choice") {
        const picked = radios.find((r) => r.checked);
        if (!picked) { error.textContent = T("pick one answer first"); return; }
        value = Number(picked.value);
      } else {
        value = input.value;
      }
      error.textContent = "";
      model.send({action: "lock", value});
    };
    lock.addEventListener("click", send);
    change.addEventListener("click", () => model.send({action: "change"}));
    if (input) input.addEventListener("keydown", (ev) => { if (ev.key === "Enter") send(); });

    const update = () => {
      const shown = model.get("shown");
      const locked = model.get("locked");
      const answered = shown !== "";
      const frozen = answered || locked;
      radios.forEach((r) => { r.disabled = frozen; });
      if (input) input.disabled = frozen;
      lock.hidden = frozen;
      change.hidden = !answered || locked;
      box.classList.toggle("ks-answered", answered);
      box.classList.toggle("ks-locked", locked);
      if (locked && answered) status.textContent = T("Locked: {answer}. The experiment has run.",
                                                     {answer: shown});
      else if (locked) status.textContent =
        T("Not answered: the experiment ran without your prediction.");
      else if (answered) status.textContent =
        T("Locked in: {answer}. You can change it until you run the experiment.",
          {answer: shown});
      else status.textContent = "";
      error.textContent = model.get("error") || "";
    };
    model.on("change:shown", update);
    model.on("change:locked", update);
    model.on("change:error", update);
    update();
  },
};
