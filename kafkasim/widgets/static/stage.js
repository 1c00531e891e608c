// kafkasim's stage (issue 32): an anywidget ES module, shipped in the package (no CDN, no
// network). Python sends a window of the simulation (model "window": nodes, tokens with their
// send and receive times, node states each time they changed, narration); this module animates
// it with requestAnimationFrame at the learner's speed and sends clicks and keys back as
// {action, node | msg_id, t}; Python acts through the Cluster/Player methods a cell calls and
// sends the next window. Colours come from JupyterLab's theme variables (stage.css).

const SVG = "http://www.w3.org/2000/svg";
const EPOCH_COLORS = ["#4E79A7", "#F28E2B", "#59A14F", "#B07AA1", "#76B7B2", "#EDC948",
                      "#FF9DA7", "#9C755F"];
const SPEEDS = {min: -2, max: 2, start: -1.5};     // log10 of simulated ms per real ms
const LABELS_UP_TO = 14;                            // token labels drawn when few are in flight
const EXTEND_AT = 8;                                // steps left when a window asks to reach on

function make(tag, attrs = {}, parent = null, ns = SVG) {
  const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  if (parent) parent.appendChild(e);
  return e;
}
const html = (tag, attrs = {}, parent = null) => make(tag, attrs, parent, null);
const setText = (e, v) => { if (e.textContent !== v) e.textContent = v; };
const setAttr = (e, k, v) => { if (e.getAttribute(k) !== v) e.setAttribute(k, v); };
const setStyle = (e, k, v) => { if (e.style[k] !== v) e.style[k] = v; };
const num = (t) => t.toLocaleString("en");

// Every word the stage shows comes from the model's "strings" (English -> the course's
// language, built by Python's tr() when the widget is made); the English is the key and the
// fallback. T("next, at {t} ms: {text}", {t, text}) fills the {name} fields.
function translator(strings) {
  const table = strings || {};
  return (key, fields = {}) => String(table[key] != null ? table[key] : key)
    .replace(/\{(\w+)\}/g, (m, k) => (k in fields ? String(fields[k]) : m));
}

function speedText(log) {
  const s = Math.pow(10, log);
  return s >= 1 ? `${s.toFixed(s < 10 ? 1 : 0)}×` : `1/${Math.round(1 / s)}×`;
}

function buildDom(root, T) {
  const box = html("div", {class: "ks-stage", tabindex: "0", role: "application",
    "data-lm-suppress-shortcuts": "true",
    "aria-label": T("kafkasim stage: space plays or pauses, arrows step, digits crash or " +
                    "restart brokers, shift+digit pauses, p produces")}, root);
  const bar = html("div", {class: "ks-bar"}, box);
  const ui = {box};
  ui.play = html("button", {class: "ks-play", title: T("play / pause (space)"),
                            text: T("▶ Play")}, bar);
  ui.back = html("button", {class: "ks-back", title: T("step back (←)"), text: T("◀ step")},
                 bar);
  ui.next = html("button", {class: "ks-next", title: T("next message or change (→)"),
                            text: T("step ▶")}, bar);
  ui.scrub = html("input", {class: "ks-scrub", type: "range", min: "0", max: "1000",
                            value: "0", "aria-label": T("time in this window")}, bar);
  ui.time = html("span", {class: "ks-time"}, bar);
  html("span", {class: "ks-label", text: T("speed")}, bar);
  ui.speed = html("input", {class: "ks-speed", type: "range", min: SPEEDS.min, max: SPEEDS.max,
                            step: "0.05", value: SPEEDS.start,
                            "aria-label": T("speed, 1/100 to 100 times real time")}, bar);
  ui.speedText = html("span", {class: "ks-speed-text"}, bar);
  ui.produce = html("button", {class: "ks-produce", title: T("produce one record (p)"),
                               text: T("Produce")}, bar);
  // the scene: nodes in SVG; tokens painted on a canvas above it (200 SVG tokens repainted
  // every frame cost ~25 ms in software rendering), with invisible SVG twins that take the
  // pointer (hover, click) and carry data-id and the position
  ui.timeline = html("div", {class: "ks-timeline", title: T("the player's branch: click to " +
                       "go there; marks: actions (blue), first invariant violation (red)")}, box);
  ui.scene = html("div", {class: "ks-scene"}, box);
  ui.svg = make("svg", {class: "ks-svg", role: "img"}, ui.scene);
  ui.canvas = html("canvas", {class: "ks-canvas", "aria-hidden": "true"}, ui.scene);
  ui.links = make("g", {class: "ks-links"}, ui.svg);
  ui.cuts = make("g", {class: "ks-cuts"}, ui.svg);
  ui.dragLine = make("line", {class: "ks-drag"}, ui.svg);
  ui.dragLine.style.display = "none";
  ui.nodes = make("g", {class: "ks-nodes"}, ui.svg);
  ui.tokens = make("g", {class: "ks-tokens"}, ui.svg);
  ui.tip = html("div", {class: "ks-tip", hidden: ""}, box);
  ui.narration = html("div", {class: "ks-narration", "aria-live": "polite", role: "status"}, box);
  ui.upNext = html("div", {class: "ks-up-next"}, box);
  ui.code = html("pre", {class: "ks-code", "aria-label": T("the equivalent calls"),
                         "data-empty": T("# the calls your clicks make appear here")}, box);
  ui.error = html("div", {class: "ks-error", role: "alert"}, box);
  // the keys, one click away (a line of the screen saved for the stage)
  const keys = html("details", {class: "ks-keys"}, box);
  html("summary", {text: T("keys and clicks")}, keys);
  html("div", {text: T("Keys: space play/pause · ← → step · 1-9 " +
    "crash/restart broker · shift+1-9 pause it · p produce. Click a broker to crash/restart " +
    "it (shift-click: pause), drag from one node to another to cut their link (again: heal), " +
    "click a message to drop it; hover a message for its fields.")}, keys);
  return ui;
}

// -- one node's drawing ------------------------------------------------------------------------
function buildNode(ui, node, size, onClick) {
  const broker = node.kind === "broker";
  const w = broker ? size.box_w : size.small_w, h = broker ? size.box_h : size.small_h;
  const g = make("g", {class: `ks-node ks-${node.kind}`, "data-node": String(node.id),
                       transform: `translate(${node.x - w / 2},${node.y - h / 2})`}, ui.nodes);
  const parts = {g, node, w, h};
  parts.rect = make("rect", {class: "ks-box", width: w, height: h, rx: 8}, g);
  parts.head = make("text", {class: "ks-head", x: broker ? 8 : w / 2, y: broker ? 17 : h / 2 + 4,
                             "text-anchor": broker ? "start" : "middle"}, g);
  parts.badge = make("text", {class: "ks-badge", x: w - 8, y: broker ? 17 : h / 2 + 4,
                              "text-anchor": "end"}, g);
  parts.badgeY = parts.badge.getAttribute("y");
  if (broker) {
    parts.view = make("text", {class: "ks-view", x: 8, y: 34}, g);
    parts.cells = make("g", {class: "ks-cells", transform: "translate(8,42)"}, g);
    parts.cellEls = [];
    for (let i = 0; i < size.cells; i++) {
      const c = make("g", {transform: `translate(${i * 13.5},0)`}, parts.cells);
      const r = make("rect", {width: 12, height: 20, rx: 2}, c);
      const t = make("text", {x: 6, y: 14, "text-anchor": "middle", class: "ks-epoch"}, c);
      parts.cellEls.push({c, r, t});
    }
    parts.hw = make("line", {class: "ks-hw", y1: -3, y2: 23}, parts.cells);
    parts.foot = make("text", {class: "ks-foot", x: 8, y: 86}, g);
  }
  if (node.kind === "broker" || node.kind === "controller") {
    g.addEventListener("click", (ev) => onClick(node.id, ev.shiftKey));
    g.addEventListener("pointerdown", (ev) => onClick.dragFrom(node, ev));
    g.addEventListener("pointerup", (ev) => onClick.dragTo(node, ev));
    g.style.cursor = "pointer";
  }
  return parts;
}

function recordCells(st, n) {
  const out = [];
  const leo = st.leo || 0, start = st.start || 0, entries = st.epochs || [];
  for (let off = Math.max(start, leo - n); off < leo; off++) {
    let epoch = -1;
    for (const [e, s] of entries) if (s <= off) epoch = e;
    out.push([off, epoch]);
  }
  return out;
}

function drawBroker(p, st, T) {
  const leader = st.role === "leader";
  const cls = ["ks-node", "ks-broker", `ks-${st.state.replace(" ", "-")}`];
  if (leader) cls.push("ks-leader");
  if (st.isolated) cls.push("ks-isolated");
  setAttr(p.g, "class", cls.join(" "));
  setText(p.head, p.node.label + (leader ? T(" ★ leader") : "") +
                  (st.controller ? T(" · controller") : ""));
  const badges = {crashed: T("✕ CRASHED"), paused: T("❚❚ PAUSED"), fenced: T("FENCED"),
                  "shutting down": T("shutting down")};
  setText(p.badge, [badges[st.state] || "", st.isolated ? T("✂ ISOLATED") : ""]
    .filter(Boolean).join(" · "));
  fitBadge(p);
  let view = "", foot = "";
  if (st.state === "crashed") view = T("down: click to restart");
  else if (st.replica === false) view = T("no replica of this partition");
  else if (st.replica) {
    view = leader ? T("epoch {epoch} · ISR [{isr}]", {epoch: st.epoch, isr: st.isr.join(", ")})
                  : st.role === "follower"
                    ? T("follows {leader} · epoch {epoch}", {leader: st.leader, epoch: st.epoch})
                    : T("no partition state yet");
    foot = T("LEO {leo} · HW {hw}", {leo: st.leo, hw: st.hw}) +
           (st.start ? T(" · log start {start}", {start: st.start}) : "");
  }
  setText(p.view, view);
  setText(p.foot, foot);
  const cells = st.replica ? recordCells(st, p.cellEls.length) : [];
  let hwX = null;
  p.cellEls.forEach((ce, i) => {
    const cell = cells[i];
    setStyle(ce.c, "display", cell ? "" : "none");
    if (!cell) return;
    const [off, epoch] = cell;
    const committed = off < st.hw;
    const colour = epoch >= 0 ? EPOCH_COLORS[epoch % EPOCH_COLORS.length] : "#999";
    setAttr(ce.r, "fill", colour);
    setAttr(ce.r, "stroke", colour);
    setAttr(ce.r, "class", committed ? "ks-cell ks-committed" : "ks-cell ks-uncommitted");
    setText(ce.t, epoch >= 0 ? String(epoch % 100) : "");
    if (off === st.hw) hwX = i * 13.5 - 1;
  });
  if (hwX === null && cells.length && st.hw >= cells[cells.length - 1][0] + 1)
    hwX = cells.length * 13.5 - 1;
  setStyle(p.hw, "display", hwX === null ? "none" : "");
  if (hwX !== null) { setAttr(p.hw, "x1", String(hwX)); setAttr(p.hw, "x2", String(hwX)); }
}

// The name and the state badge share the box's top line. When the pair does not fit (a leader
// that is also the controller, paused and cut off; a wider language such as Korean) the badge
// rides on the box's top edge instead of covering the name. Measured when either text changes;
// a box not laid out yet (its cell still hidden) is measured again on the next frames.
function fitBadge(p) {
  const key = `${p.head.textContent}|${p.badge.textContent}`;
  if (p.fitKey === key) return;
  const name = p.head.getComputedTextLength();
  if (!name && p.head.textContent) {
    p.fitKey = null;
    if (!p.fitPending && (p.fitTries || 0) < 120) {
      p.fitPending = true;
      p.fitTries = (p.fitTries || 0) + 1;
      requestAnimationFrame(() => { p.fitPending = false; fitBadge(p); });
    }
    return;
  }
  p.fitKey = key;
  p.fitTries = 0;
  const fits = !p.badge.textContent ||
    name + 6 + p.badge.getComputedTextLength() <= p.w - 16;
  setAttr(p.badge, "y", fits ? p.badgeY : "-5");
}

function drawSmall(p, st) {
  const cls = ["ks-node", `ks-${p.node.kind}`];
  if (st) {
    cls.push(`ks-${st.state}`);
    if (st.active) cls.push("ks-active");
    if (st.isolated) cls.push("ks-isolated");
  }
  setAttr(p.g, "class", cls.join(" "));
  setText(p.head, p.node.label + (st && st.active ? " ★" : ""));
  setText(p.badge, st && st.state === "crashed" ? "✕" : "");
}

// -- the widget ----------------------------------------------------------------------------------
export default {
  render({model, el}) {
    const T = translator(model.get("strings"));
    const ui = buildDom(el, T);
    const st = {win: null, t: 0, playing: !!model.get("autoplay"), waiting: false,
                speedLog: SPEEDS.start, last: null, frameIdx: -1, narrIdx: -2, nodes: new Map(),
                tokens: [], stops: [], raf: 0, hover: null, colours: null, drag: null, dragged: false,
                dirty: true, extending: null, stepAfter: false, nodesKey: null};

    const send = (msg) => {
      if (st.waiting && msg.action !== "refresh") return;
      st.waiting = true;
      ui.box.classList.add("ks-waiting");
      model.send({...msg, speed: Math.pow(10, st.speedLog)});
    };
    const act = (msg) => send({...msg, t: Math.floor(st.t)});
    // drag from one node to another: cut their link (again: heal)
    const svgPoint = (ev) => {
      const m = ui.svg.getScreenCTM();
      if (!m) return [0, 0];
      const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse());
      return [p.x, p.y];
    };
    const endDrag = () => { st.drag = null; ui.dragLine.style.display = "none"; };
    const onNodeClick = (id, shift) => {
      if (st.dragged) { st.dragged = false; return; }
      const p = st.nodes.get(String(id));
      if (st.waiting || !p) return;
      // acknowledged at once; the node's new state comes with the next window
      const down = p.g.classList.contains("ks-crashed");
      p.g.classList.add("ks-pending");
      p.badge.textContent = shift ? T("pausing…") : down ? T("starting…") : T("crashing…");
      act({action: shift ? "pause" : "toggle", node: id});
    };
    onNodeClick.dragFrom = (node, ev) => {
      st.drag = {node, x: ev.clientX, y: ev.clientY};
      st.dragged = false;
    };
    onNodeClick.dragTo = (node) => {
      const d = st.drag;
      endDrag();
      if (!d || d.node.id === node.id) return;
      st.dragged = false;
      act({action: "cut", node: d.node.id, to: node.id});
    };
    ui.svg.addEventListener("pointermove", (ev) => {
      const d = st.drag;
      if (!d || (ev.buttons & 1) === 0) { if (d) endDrag(); return; }
      if (Math.hypot(ev.clientX - d.x, ev.clientY - d.y) < 8) return;
      const [x, y] = svgPoint(ev);
      Object.entries({x1: d.node.x, y1: d.node.y, x2: x, y2: y})
        .forEach(([k, v]) => ui.dragLine.setAttribute(k, v));
      ui.dragLine.style.display = "";
      st.dragged = true;
    });
    ui.svg.addEventListener("pointerup", () => { if (st.drag) endDrag(); });

    function load(win) {
      // an extension (asked in the background when steps run low) starts where this
      // window does and reaches further: time, play and a request in flight go on
      const further = !!win.extended && !!st.win && win.t0 === st.win.t0;
      st.extending = null;
      // frames after the first carry only the nodes that changed: make each one whole
      let whole = {};
      for (const f of win.frames) {
        whole = {...whole, ...f.nodes};
        f.nodes = whole;
      }
      st.win = win;
      ui.box.classList.toggle("ks-big", !!win.presentation);
      st.t = further ? Math.min(Math.max(st.t, win.t0), win.t1) : win.t0;
      st.frameIdx = -1;
      st.narrIdx = -2;      // (-1: before the first line, which shows the hint)
      if (!further) {
        st.stepAfter = false;
        st.waiting = false;
        ui.box.classList.remove("ks-waiting");
      }
      const size = win.size;
      setAttr(ui.svg, "viewBox", `0 0 ${size.w} ${size.h}`);
      // the same nodes in the same places (most windows): keep their drawing, redraw states
      const nodesKey = JSON.stringify([win.nodes, size]);
      const rebuild = nodesKey !== st.nodesKey;
      st.nodesKey = nodesKey;
      if (rebuild) {
        ui.nodes.replaceChildren();
        st.nodes = new Map();
      }
      ui.links.replaceChildren();
      ui.tokens.replaceChildren();
      const pos = new Map();
      const half = new Map();
      for (const n of win.nodes) {
        if (rebuild) st.nodes.set(String(n.id), buildNode(ui, n, size, onNodeClick));
        pos.set(String(n.id), [n.x, n.y]);
        half.set(String(n.id), n.kind === "broker" ? [size.box_w / 2 + 3, size.box_h / 2 + 3]
                                                   : [size.small_w / 2 + 3, size.small_h / 2 + 3]);
      }
      // where the segment from a box's centre towards another point leaves the box
      const edge = (id, from, to) => {
        const [hw, hh] = half.get(id);
        const dx = to[0] - from[0], dy = to[1] - from[1];
        if (!dx && !dy) return from;
        const k = Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
        return [from[0] + dx * Math.min(k, 0.45), from[1] + dy * Math.min(k, 0.45)];
      };
      // the boxes a token's label must not cover (a node's name is worth more than a label)
      st.boxes = win.nodes.map((n) => {
        const [hw, hh] = half.get(String(n.id));
        return [n.x - hw, n.y - hh, n.x + hw, n.y + hh];
      });
      const pairs = new Set();
      st.tokens = win.tokens.map((tok) => {
        const ca = pos.get(String(tok.src)), cb = pos.get(String(tok.dst));
        const a = edge(String(tok.src), ca, cb), b = edge(String(tok.dst), cb, ca);
        const key = [String(tok.src), String(tok.dst)].sort().join("|");
        if (!pairs.has(key)) {
          pairs.add(key);
          make("line", {class: "ks-link", x1: ca[0], y1: ca[1], x2: cb[0], y2: cb[1]}, ui.links);
        }
        // each direction on its own side of the link
        const dx = b[0] - a[0], dy = b[1] - a[1], len = Math.hypot(dx, dy) || 1;
        const side = String(tok.src) < String(tok.dst) ? 1 : -1;
        const ox = -dy / len * 6 * side, oy = dx / len * 6 * side;
        // its pointer twin is made when it first shows (most tokens of a window never show
        // before the next window comes: a click, a seek)
        return {tok, g: null, ax: a[0] + ox, ay: a[1] + oy, bx: b[0] + ox, by: b[1] + oy,
                shown: false, x: null, y: null};
      });
      // a step stops where something is narrated (a message arrives or is lost, a node
      // changes): the line "next, at ..." names exactly where the step goes
      st.stops = [...new Set(win.narration.map((n) => n.t))]
        .filter((t) => t >= win.t0 && t <= win.t1).sort((a, b) => a - b);
      st.hover = null;
      st.colours = null;         // the theme may have changed
      drawTimeline(win);
      draw();
      kick();
      if (further && st.stepAfter) { st.stepAfter = false; stepTo(1); }
    }

    // the learner moves on (a step, play) in a window that could reach further, with fewer
    // than EXTEND_AT steps left (or half its time played): ask for the same window reaching
    // further, in the background (no waiting), once; step and play go on meanwhile, and
    // through the window's end without a kernel round trip there. A window only passed
    // through (a seek, a click) or with many steps ahead (KRaft's busy windows) is not
    // extended: an extension costs the kernel the whole window again
    function maybeExtend() {
      const w = st.win;
      if (!w || !w.more || st.waiting || st.extending === w.serial || st.extended === w.serial)
        return;
      const left = st.stops.filter((t) => t > st.t).length;
      if (left >= EXTEND_AT && !(st.playing && st.t > (w.t0 + w.t1) / 2)) return;
      st.extending = w.serial;
      st.extended = w.serial;
      model.send({action: "extend", t0: w.t0, speed: Math.pow(10, st.speedLog)});
    }

    const twin = (id) => st.tokens.find((k) => k.tok.id === id) || null;

    // a token's invisible SVG twin: it takes the pointer (hover: the fields; click: drop it)
    // and carries data-id and the position; the canvas draws the token
    function tokenTwin(tok) {
      const doomed = tok.fate === "dropped", held = tok.held;
      const g = make("g", {class: "ks-token" + (doomed ? " ks-doomed" : "") +
                                  (held ? " ks-held" : ""),
                           "data-id": String(tok.id), "data-type": tok.type}, ui.tokens);
      make("circle", {r: 9}, g);
      g.addEventListener("pointerenter", (ev) => {
        st.hover = twin(tok.id); touch(); showTip(tok, ev);
      });
      g.addEventListener("pointerleave", () => {
        st.hover = null; touch(); ui.tip.hidden = true;
      });
      g.addEventListener("click", (ev) => {
        ev.stopPropagation();
        act({action: "drop", msg_id: tok.id});
      });
      return g;
    }

    // the player's whole branch: the window, the marks; a click goes there
    function drawTimeline(win) {
      const tl = win.timeline;
      ui.timeline.replaceChildren();
      ui.timeline.style.display = tl ? "" : "none";
      if (!tl) return;
      const span = Math.max(tl.end - tl.start, 1);
      const left = (t) => `${(100 * (Math.min(Math.max(t, tl.start), tl.end) - tl.start) /
                              span).toFixed(2)}%`;
      const track = html("div", {class: "ks-tl-track"}, ui.timeline);
      const range = html("div", {class: "ks-tl-window"}, track);
      range.style.left = left(win.t0);
      range.style.width = `${Math.max(0.5, 100 * (win.t1 - win.t0) / span)}%`;
      ui.tlNow = html("div", {class: "ks-tl-now"}, track);
      for (const m of tl.marks) {
        const b = html("button", {class: `ks-tl-mark ks-tl-${m.kind}`, title: m.label,
                                  "aria-label": m.label}, track);
        b.style.left = left(m.t);
        b.addEventListener("click", (ev) => { ev.stopPropagation(); goTo(m.t); });
      }
      track.addEventListener("click", (ev) => {
        const r = track.getBoundingClientRect();
        goTo(Math.round(tl.start + span * (ev.clientX - r.left) / Math.max(r.width, 1)));
      });
      st.tlLeft = left;
      const v = tl.marks.find((m) => m.kind === "violation");
      html("span", {class: "ks-tl-text", text: T("branch {start}–{end} ms",
        {start: num(tl.start), end: num(tl.end)}) + (v ? ` · ${v.label}` : "")}, ui.timeline);
    }

    function goTo(t) {
      const w = st.win;
      st.playing = false;
      if (t >= w.t0 && t <= w.t1) { st.t = t; draw(); return; }
      send({action: "seek", t});
    }

    function showTip(tok, ev) {
      const where = tok.recv === null
        ? (tok.held ? T("held by a fault") : T("still on the wire"))
        : tok.fate === "dropped" ? T("lost at {t} ms", {t: tok.recv})
        : T("arrives at {t} ms", {t: tok.recv});
      ui.tip.textContent = `#${tok.id} ${tok.type} ${tok.src} → ${tok.dst}\n` +
        T("sent at {t} ms, {where}", {t: tok.sent, where}) +
        (tok.reason ? ` (${T(tok.reason)})` : "") +
        `\n${tok.fields}\n` + T("click: drop this message");
      const r = ui.box.getBoundingClientRect();
      ui.tip.style.left = `${Math.min(ev.clientX - r.left + 12, r.width - 260)}px`;
      ui.tip.style.top = `${ev.clientY - r.top + 12}px`;
      ui.tip.hidden = false;
    }

    function frameIndex(t) {
      const fs = st.win.frames;
      let lo = 0, hi = fs.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (fs[mid].t <= t) lo = mid; else hi = mid - 1;
      }
      return lo;
    }

    function drawCuts(cuts) {
      ui.cuts.replaceChildren();
      const at = new Map(st.win.nodes.map((n) => [String(n.id), n]));
      for (const [a, b] of cuts) {
        const na = at.get(String(a)), nb = at.get(String(b));
        if (!na || !nb) continue;
        make("line", {class: "ks-cut", x1: na.x, y1: na.y, x2: nb.x, y2: nb.y}, ui.cuts);
        make("text", {class: "ks-cut-mark", x: (na.x + nb.x) / 2, y: (na.y + nb.y) / 2 + 5,
                      "text-anchor": "middle", text: T("✂ cut")}, ui.cuts);
      }
    }

    function drawTokens(t) {
      let visible = 0;
      for (const k of st.tokens) {
        const {tok} = k;
        const on = tok.sent <= t && (tok.recv === null || t < tok.recv);
        if (on !== k.shown) {
          if (!k.g) k.g = tokenTwin(tok);
          k.g.style.display = on ? "" : "none";
          k.shown = on;
        }
        if (!on) continue;
        visible++;
        let f = 0.5;
        if (tok.recv !== null && !(tok.held && tok.fate !== "delivered"))
          f = Math.min(1, Math.max(0, (t - tok.sent) / Math.max(tok.recv - tok.sent, 1)));
        if (tok.fate === "dropped") f = Math.min(f, 0.85);
        const x = k.ax + (k.bx - k.ax) * f, y = k.ay + (k.by - k.ay) * f;
        if (x !== k.x || y !== k.y) {
          k.g.setAttribute("transform", `translate(${x.toFixed(1)},${y.toFixed(1)})`);
          k.x = x; k.y = y;
        }
      }
      paintTokens(visible <= LABELS_UP_TO);
      return visible;
    }

    function themeColour(name, fallback) {
      return getComputedStyle(ui.box).getPropertyValue(name).trim() || fallback;
    }

    // where a token's label goes: right and above the token, else left, else below; none
    // that covers a node's box (unless the learner hovers the token: then the first place)
    function labelPlace(ctx, t, hovered) {
      const w = ctx.measureText(t.tok.label).width, h = 11;
      const places = [[t.x + 10, t.y - 8], [t.x - 10 - w, t.y - 8],
                      [t.x + 10, t.y + 16], [t.x - 10 - w, t.y + 16]];
      const clear = ([x, y]) => !(st.boxes || []).some(([x0, y0, x1, y1]) =>
        x < x1 && x + w > x0 && y - h < y1 && y > y0);
      return places.find(clear) || (hovered ? places[0] : null);
    }

    function paintTokens(labels) {
      const cv = ui.canvas, svg = ui.svg, size = st.win.size;
      const cw = svg.clientWidth, ch = svg.clientHeight, dpr = window.devicePixelRatio || 1;
      // not laid out (detached, or a theme's style sheets being swapped): keep the picture,
      // paint when next asked (a resize, the theme settled)
      if (!cw || !ch) { st.dirty = true; return; }
      if (cv.width !== Math.round(cw * dpr) || cv.height !== Math.round(ch * dpr)) {
        cv.width = Math.round(cw * dpr);
        cv.height = Math.round(ch * dpr);
        cv.style.width = `${cw}px`;
        cv.style.height = `${ch}px`;
      }
      const ctx = cv.getContext("2d");
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, cv.width, cv.height);
      const k = Math.min(cw / size.w, ch / size.h);
      ctx.setTransform(k * dpr, 0, 0, k * dpr, (cw - size.w * k) / 2 * dpr,
                       (ch - size.h * k) / 2 * dpr);
      if (!st.colours) {
        st.colours = {bg: themeColour("--jp-layout-color0", "#fff"),
                      text: themeColour("--jp-ui-font-color1", "#333"),
                      error: themeColour("--jp-error-color1", "#c62828")};
      }
      const c = st.colours;
      ctx.font = st.win.presentation ? "13px sans-serif" : "10.5px sans-serif";
      ctx.lineJoin = "round";
      for (const t of st.tokens) {
        if (!t.shown) continue;
        const {tok} = t;
        ctx.beginPath();
        ctx.arc(t.x, t.y, 7, 0, 2 * Math.PI);
        const odd = tok.fate === "dropped" || tok.held;
        ctx.globalAlpha = odd ? 0.35 : 1;
        ctx.fillStyle = tok.color;
        ctx.fill();
        ctx.globalAlpha = 1;
        ctx.setLineDash(tok.fate === "dropped" ? [3, 2] : []);
        ctx.lineWidth = odd ? 2.5 : 1.5;
        ctx.strokeStyle = odd ? c.error : tok.color;
        ctx.stroke();
        ctx.setLineDash([]);
        if (tok.resp) {               // a response: a hole in the middle
          ctx.beginPath();
          ctx.arc(t.x, t.y, 2.6, 0, 2 * Math.PI);
          ctx.fillStyle = c.bg;
          ctx.fill();
        }
        const at = (labels || t === st.hover) && labelPlace(ctx, t, t === st.hover);
        if (at) {
          ctx.lineWidth = 3;
          ctx.strokeStyle = c.bg;
          ctx.strokeText(tok.label, at[0], at[1]);
          ctx.fillStyle = c.text;
          ctx.fillText(tok.label, at[0], at[1]);
        }
      }
    }

    function drawNarration(t) {
      const ns = st.win.narration;
      let i = -1;
      for (let j = 0; j < ns.length && ns[j].t <= t; j++) i = j;
      if (i === st.narrIdx) return;
      st.narrIdx = i;
      // every line of one millisecond, the latest last (a step shows all it ran)
      const same = (k) => ns.filter((n) => n.t === ns[k].t).map((n) => n.text);
      const joined = (k) => { const xs = same(k); return xs.length > 3
        ? [...xs.slice(0, 2), `(+${xs.length - 3})`, xs[xs.length - 1]].join(" · ")
        : xs.join(" · "); };
      setText(ui.narration, i < 0
        ? T("Press play (space) or step (→) to watch the messages.")
        : T("t = {t} ms: {text}", {t: num(ns[i].t), text: joined(i)}));
      // the next event, named before the step that shows it
      const k = ns.findIndex((n, j) => j > i && n.t > t);
      setText(ui.upNext, k >= 0
        ? T("next, at {t} ms: {text}", {t: num(ns[k].t), text: joined(k)})
        : T("next: the following window (step or play on)"));
      ui.next.title = `${ui.upNext.textContent} (→)`;
    }

    function draw() {
      const win = st.win;
      if (!win) return;
      st.dirty = false;
      const t = st.t;
      const fi = frameIndex(t);
      if (fi !== st.frameIdx) {
        st.frameIdx = fi;
        const frame = win.frames[fi];
        for (const [id, p] of st.nodes) {
          const s = frame.nodes[id];
          if (p.node.kind === "broker") drawBroker(p, s, T); else drawSmall(p, s);
        }
        drawCuts(frame.nodes.cuts || []);
      }
      const n = drawTokens(t);
      drawNarration(t);
      // the DOM changes only when what it shows does (a still stage is still: no mutation
      // per frame, which also lets a page, or a test, tell when the stage has settled)
      if (win.timeline && ui.tlNow) setStyle(ui.tlNow, "left", st.tlLeft(t));
      setText(ui.time, T("t = {t} ms · {n} in flight", {t: num(Math.floor(t)), n}));
      const pos = String(Math.round(1000 * (t - win.t0) / Math.max(win.t1 - win.t0, 1)));
      if (ui.scrub.value !== pos) ui.scrub.value = pos;
      setText(ui.play, st.playing ? T("❚❚ Pause") : T("▶ Play"));
      setText(ui.speedText, speedText(st.speedLog));
      setAttr(ui.svg, "aria-label", T("stage at t = {t} ms, {n} messages in flight",
                                      {t: Math.floor(t), n}));
    }

    // a frame is asked for only while playing or when something changed (a hover, a resize,
    // a theme change, a window that came while playing): a still stage costs nothing per
    // frame, however many are on the page
    function kick() { if (!st.raf) st.raf = requestAnimationFrame(tick); }
    function touch() { st.dirty = true; kick(); }

    function tick(now) {
      st.raf = 0;
      if (st.playing && st.win && !st.waiting) {
        if (st.last !== null) {
          const dt = Math.min(now - st.last, 100);
          st.t += dt * Math.pow(10, st.speedLog);
          st.dirty = true;
          maybeExtend();
          if (st.t >= st.win.t1) {
            st.t = st.win.t1;
            if (st.extending !== st.win.serial) send({action: "advance"});  // (else: it comes)
          }
        }
        st.last = now;
      } else st.last = null;
      if (st.dirty) draw();
      if (st.playing) kick();
    }

    function stepTo(dir) {
      if (!st.win || st.waiting) return;
      st.playing = false;
      const eps = 1e-6;
      if (dir > 0) {
        const next = st.stops.find((t) => t > st.t + eps);
        if (next === undefined || next >= st.win.t1) {
          // the extension asked for is on its way: step on when it comes
          if (st.extending === st.win.serial) st.stepAfter = true;
          else send({action: "advance"});
          return;
        }
        st.t = next;
        maybeExtend();
      } else {
        const prev = [...st.stops].reverse().find((t) => t < st.t - eps);
        const tl = st.win.timeline;
        if (prev === undefined && tl && st.win.t0 > tl.start) {   // back into the last window
          send({action: "seek", t: Math.max(tl.start, st.win.t0 - 500)});
          return;
        }
        st.t = prev === undefined ? st.win.t0 : prev;
      }
      draw();
    }

    const togglePlay = () => { st.playing = !st.playing; draw(); kick(); };
    ui.play.addEventListener("click", togglePlay);
    ui.next.addEventListener("click", () => stepTo(1));
    ui.back.addEventListener("click", () => stepTo(-1));
    ui.produce.addEventListener("click", () => act({action: "produce"}));
    ui.scrub.addEventListener("input", () => {
      const w = st.win;
      st.t = w.t0 + (w.t1 - w.t0) * Number(ui.scrub.value) / 1000;
      draw();
    });
    ui.speed.addEventListener("input", () => { st.speedLog = Number(ui.speed.value); draw(); });
    // repaint the canvas when its size or JupyterLab's theme changes (nothing else repaints a
    // still stage)
    const resized = new ResizeObserver(touch);
    resized.observe(ui.svg);
    const themed = new MutationObserver(() => {
      st.colours = null;
      touch();
      setTimeout(() => { st.colours = null; touch(); }, 300);    // once its styles applied
    });
    themed.observe(document.body, {attributes: true,
                                   attributeFilter: ["data-jp-theme-name", "data-jp-theme-light"]});
    ui.box.addEventListener("keydown", (ev) => {
      if (ev.target instanceof HTMLInputElement && ev.key.startsWith("Arrow")) return;
      let done = true;
      const digit = /^Digit([1-9])$/.exec(ev.code);
      if (ev.key === " ") togglePlay();
      else if (ev.key === "ArrowRight") stepTo(1);
      else if (ev.key === "ArrowLeft") stepTo(-1);
      else if (ev.key === "p" || ev.key === "P") act({action: "produce"});
      else if (digit) {
        const brokers = st.win.nodes.filter((n) => n.kind === "broker");
        const d = Number(digit[1]);
        const node = brokers.find((n) => n.id === d) || brokers[d - 1];
        if (node) onNodeClick(node.id, ev.shiftKey);
      } else done = false;
      if (done) { ev.preventDefault(); ev.stopPropagation(); }
    });
    ui.svg.addEventListener("pointerdown", () => ui.box.focus({preventScroll: true}));

    const showCode = () => { ui.code.textContent = (model.get("code") || []).join("\n"); };
    const showError = () => { ui.error.textContent = model.get("error") || ""; };
    model.on("change:window", () => load(model.get("window")));
    model.on("change:code", showCode);
    model.on("change:error", showError);
    showCode();
    showError();
    load(model.get("window"));
    // say the stage is watched, and at which speed (the kernel sizes the next windows for it):
    // a notice, no window back; the window shown is the one the cell made
    model.send({action: "watch", speed: Math.pow(10, st.speedLog)});
    kick();
    return () => { cancelAnimationFrame(st.raf); resized.disconnect(); themed.disconnect(); };
  },
};
