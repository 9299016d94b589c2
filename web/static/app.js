// onnxcost in the browser. Every number on this page comes from the Go
// build, which runs the command line's own pipeline on the model's bytes:
// onnxcost.wasm (web/wasm) in the page when the binary embeds it, or else
// `onnxcost serve` itself over loopback (/api/, the same JSON); this file
// only lays the results out. With the WebAssembly the model never leaves
// the page, and nothing is fetched after load except the preloaded model
// of `onnxcost serve MODEL` from the same origin; without it the model
// goes to that local server only.

const $ = (sel) => document.querySelector(sel);
const timing = (window.onnxcostTiming = {});
const body = document.body;

// ---- state (everything but the model lives in the URL hash) ----
// The cost flags of 'onnxcost report' by their JSON names in
// web/session.Settings; a zero value is the flag's default.
const state = { gpu: "", dtype: "", batch: 0, dims: {}, plan: "", tab: "nodes",
  runtime: "", train: false, optimizer: "", checkpoint: "", power_cap: 0, sm_clock: 0, gpus: 0,
  grad_accum: 0, data_parallel: 0, warm: false,
  // generate's --prompt and --output (0: the Go build's defaults), and
  // its serving curve's flags, read by the Generation tab only.
  prompt: 0, output: 0, concurrency: "", ttft_slo: 0, tpot_slo: 0, price: 0,
  // The graph's view (web/session.GraphView): the open groups' keys, in
  // the order they were opened, and a focus pattern (graph --focus).
  open: [], focus: "" };
// The numeric flags kept in the hash by name, with the control that sets
// each: --power-cap and --sm-clock take decimals, --gpus a whole number.
const numFlags = [["power_cap", "#power-cap", parseFloat], ["sm_clock", "#sm-clock", parseFloat], ["gpus", "#gpus-n", (v) => parseInt(v, 10)],
  ["grad_accum", "#grad-accum", (v) => parseInt(v, 10)], ["data_parallel", "#data-parallel", (v) => parseInt(v, 10)],
  ["samples", "#samples", (v) => parseInt(v, 10)]];
const textFlags = [["runtime", "#runtime"], ["optimizer", "#optimizer"], ["checkpoint", "#checkpoint"]];
// generate's lengths, kept in the hash but sent only with the generate
// call: changing one prices nothing else again.
// Each with how a control's or the hash's text reads: a count, or
// --concurrency's LIST as typed (the Go build parses it).
const positive = (v) => { const n = parseInt(v, 10); return n > 0 ? n : 0; };
const positiveReal = (v) => { const x = parseFloat(v); return x > 0 ? x : 0; };
const genFlags = [["prompt", "#gen-prompt", positive], ["output", "#gen-output", positive], ["concurrency", "#gen-concurrency", (v) => v.trim()],
  ["ttft_slo", "#gen-ttft-slo", positiveReal], ["tpot_slo", "#gen-tpot-slo", positiveReal], ["price", "#gen-price", positiveReal]];
let choices = null;      // the menus' values, from the Go build (session.AllChoices)
let api = null;          // the Go build's calls: wasmAPI or serverAPI
let gpuByName = {};      // hwdb entries by canonical name
let model = null;        // {name, symbols}
let report = null;       // the current report (report --format json)
let text = {};           // its totals in the CLI's text units
let cache = {};          // per-settings results of the slower views
let selected = null;     // the selected node's name
let sortKey = "time_s", sortAsc = false, estimates = 0;
// calibration is --calibration, {name, text} of the file chosen (null:
// none): sent with every call, kept out of the URL (a file's contents,
// not a setting one retypes).
let calibration = null;
// gpuFile is --gpu-file, {name, text} likewise: its GPUs join the menu.
let gpuFile = null;
// runtimeFile is --runtime-file, likewise: its profiles join the runtime
// menu.
let runtimeFile = null;

// urlBad holds the URL's gpu and batch values the page could not use, by
// name: serve's settings (or the default) stand in for them, and the page
// says so (noteBadURL) rather than quietly show another GPU.
const urlBad = {};

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (p.get("gpu")) state.gpu = p.get("gpu");
  if (p.has("dtype")) state.dtype = p.get("dtype");
  const rawBatch = (p.get("batch") || "").trim();
  state.batch = /^[0-9]+$/.test(rawBatch) && parseInt(rawBatch, 10) > 0 ? parseInt(rawBatch, 10) : 0;
  if (rawBatch && !state.batch) urlBad.batch = rawBatch;
  if (["fused", "unfused", "eager", "inductor", "onnxruntime"].includes(p.get("plan"))) state.plan = p.get("plan");
  if (p.get("tab")) state.tab = p.get("tab");
  for (const [k] of textFlags) state[k] = p.get(k) || "";
  for (const [k, , parse] of numFlags) { const v = parse(p.get(k) || ""); state[k] = v > 0 ? v : 0; }
  state.train = p.get("train") === "1";
  state.warm = p.get("warm") === "1";
  for (const [k, , parse] of genFlags) state[k] = parse(p.get(k) || "");
  state.open = p.getAll("open");
  state.focus = p.get("focus") || "";
  state.dims = {};
  for (const [k, v] of p) {
    if (k.startsWith("dim.")) {
      const n = parseInt(v, 10);
      if (n > 0) state.dims[k.slice(4)] = n;
    }
  }
}

function writeHash() {
  const p = new URLSearchParams();
  p.set("gpu", state.gpu);
  if (state.dtype) p.set("dtype", state.dtype);
  if (state.batch > 0) p.set("batch", String(state.batch));
  for (const k of Object.keys(state.dims).sort()) p.set("dim." + k, String(state.dims[k]));
  if (state.plan) p.set("plan", state.plan);
  for (const [k] of textFlags) if (state[k]) p.set(k, state[k]);
  if (state.train) p.set("train", "1");
  if (state.warm) p.set("warm", "1");
  for (const [k] of numFlags) if (state[k] > 0) p.set(k, String(state[k]));
  for (const [k] of genFlags) if (state[k]) p.set(k, String(state[k]));
  p.set("tab", state.tab);
  for (const k of state.open) p.append("open", k);
  if (state.focus) p.set("focus", state.focus);
  history.replaceState(null, "", "#" + p.toString());
}

function settings() {
  const st = { gpu: state.gpu, dtype: state.dtype, batch: state.batch, dims: state.dims, plan: state.plan, train: state.train, warm: state.warm };
  for (const [k] of textFlags) st[k] = state[k];
  for (const [k] of numFlags) st[k] = state[k];
  if (calibration) st.calibration = calibration;
  if (gpuFile) st.gpu_file = gpuFile;
  if (runtimeFile) st.runtime_file = runtimeFile;
  return JSON.stringify(st);
}

// genSettings are the settings with generate's lengths.
function genSettings() {
  const st = JSON.parse(settings());
  for (const [k] of genFlags) if (state[k]) st[k] = state[k];
  return JSON.stringify(st);
}

// drawSettings are the settings with the graph's view; reveal names a
// node to draw alone (draw opens the groups around it).
function drawSettings(reveal) {
  const st = JSON.parse(settings());
  st.graph = { expand: state.open, focus: state.focus };
  if (reveal) st.graph.reveal = reveal;
  return JSON.stringify(st);
}

// ---- formatting: cost/render's units (cost/render/units.go), so the
// page reads like the CLI's text report ----
function sig(v) {
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(2);
}
function si(v, unit) {
  if (!isFinite(v)) return "–";
  for (const [p, f] of [["P", 1e15], ["T", 1e12], ["G", 1e9], ["M", 1e6], ["k", 1e3]]) if (Math.abs(v) >= f) return sig(v / f) + " " + p + unit;
  return unit ? sig(v) + " " + unit : sig(v);
}
function secs(s) {
  if (!isFinite(s)) return "–";
  const a = Math.abs(s);
  if (a === 0) return "0";
  if (a < 1e-6) return sig(s * 1e9) + " ns";
  if (a < 1e-3) return sig(s * 1e6) + " µs";
  if (a < 1) return sig(s * 1e3) + " ms";
  return sig(s) + " s";
}
function joules(j) {
  if (j === 0) return "0 J";
  if (j < 1e-3) return sig(j * 1e6) + " µJ";
  if (j < 1) return sig(j * 1e3) + " mJ";
  return sig(j) + " J";
}
const flops = (v) => si(v, "FLOP");
const bytes = (v) => si(v, "B");
const count = (v) => (Math.abs(v) < 1000 && Math.trunc(v) === v ? String(v) : si(v, ""));
// grouped writes 12,345 (not toLocaleString: loading the locale data costs
// tens of milliseconds on the first call).
const grouped = (v) => String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const pct = (v) => (100 * v).toFixed(1) + "%";
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

// ---- messages ----
function status(msg) { $("#status").textContent = msg; $("#status").hidden = !msg; }
function showError(line) {
  $("#report-json").textContent = "";
  window.onnxcostReport = null;
  const e = $("#error");
  e.textContent = line;
  e.hidden = false;
  $("#main").hidden = true;
  body.dataset.state = "error";
}
function clearError() { $("#error").hidden = true; $("#error").textContent = ""; }

// call runs one of the Go build's functions and resolves to its result,
// or null after showing its error line.
async function call(fn, ...args) {
  let out;
  try {
    out = JSON.parse(await api.call(fn, ...args));
  } catch (e) {
    showError("onnxcost: " + (e && e.message ? e.message : e));
    return null;
  }
  if (out && typeof out === "object" && !Array.isArray(out) && typeof out.error === "string") {
    showError(out.error);
    return null;
  }
  return out;
}

// ---- the Go build: in the page, or the server ----

// loadScript runs a script of this origin (Go's wasm_exec.js, needed only
// with the WebAssembly).
function loadScript(src) {
  return new Promise((ok, fail) => {
    const s = document.createElement("script");
    s.src = src;
    s.onload = ok;
    s.onerror = () => fail(new Error(src + " did not load"));
    document.head.append(s);
  });
}

// wasmAPI starts onnxcost.wasm from its response.
async function wasmAPI(resp) {
  await loadScript("wasm_exec.js");
  const ready = new Promise((r) => (window.onnxcostReady = r));
  const go = new Go();
  const wasm = await WebAssembly.instantiateStreaming(resp, go.importObject);
  timing.wasmCompiled = performance.now();
  go.run(wasm.instance);
  await ready;
  const w = window.onnxcost;
  return { version: w.version, call: async (fn, ...args) => w[fn](...args) };
}

// serverAPI is `onnxcost serve` answering the same calls: open sends the
// model's bytes once and gets a handle; the others send the settings
// with it. A server that no longer holds the model (it keeps a few) says
// 410, and the model is sent again.
async function serverAPI(version) {
  let opened = null; // {name, bytes, handle}
  const post = async (path, body) => {
    const r = await fetch(path, { method: "POST", body, cache: "no-store" });
    const text = await r.text();
    if (r.status === 410) return { gone: true };
    if (!(r.headers.get("Content-Type") || "").startsWith("application/json")) throw new Error(`${path}: HTTP ${r.status}: ${text.trim()}`);
    return { text };
  };
  const open = async (name, bytes) => {
    const { text } = await post("api/open?name=" + encodeURIComponent(name), bytes);
    const out = JSON.parse(text);
    opened = out.model ? { name, bytes, handle: out.model } : null;
    return text;
  };
  return {
    version,
    call: async (fn, ...args) => {
      if (fn === "open") return open(...args);
      const q = opened ? "?model=" + encodeURIComponent(opened.handle) : "";
      let r = await post("api/" + fn + q, args[0] || "");
      if (r.gone && opened) {
        await open(opened.name, opened.bytes);
        r = await post("api/" + fn + "?model=" + encodeURIComponent(opened.handle), args[0] || "");
      }
      if (r.gone) throw new Error("the server lost the model: open it again");
      return r.text;
    },
  };
}

// connect starts the Go build: onnxcost.wasm when served, or else (404: a
// binary built without it) the server's own answers.
async function connect() {
  const resp = await fetch("onnxcost.wasm");
  if (resp.ok) {
    timing.transport = "wasm";
    return wasmAPI(resp);
  }
  if (resp.status !== 404) throw new Error(`onnxcost.wasm: HTTP ${resp.status}`);
  const v = await fetch("api/version", { method: "POST", cache: "no-store" });
  if (!v.ok) throw new Error("onnxcost.wasm is missing: open the page with `onnxcost serve`, or build it with scripts/build_web.sh");
  timing.transport = "server";
  return serverAPI(await v.json());
}

// loadGPUs fills the GPU menu with the database's GPUs and the GPU
// file's (gpuList under the settings); null when the call failed.
async function loadGPUs() {
  const gpus = await call("gpuList", settings());
  if (!gpus) return null;
  gpuByName = {};
  const sel = $("#gpu");
  sel.innerHTML = "";
  for (const g of gpus) {
    gpuByName[g.name] = g;
    const o = document.createElement("option");
    o.value = g.name;
    o.textContent = `${g.name} · ${g.arch}`;
    sel.append(o);
  }
  return gpus;
}

// findGPU is the GPU a name or alias names, in any case, as --gpu takes it.
function findGPU(gpus, name) {
  const want = name.toLowerCase();
  return gpus.find((g) => g.name.toLowerCase() === want || (g.aliases || []).includes(want));
}

const defaultGPU = (gpus) => (gpuByName["A100-SXM4-80GB"] ? "A100-SXM4-80GB" : gpus[0].name);

// useGPUFile puts file f in force (null: none) as --gpu-file: the menu
// offers its GPUs, the first of them chosen (the GPU the file was loaded
// for), and the model is priced again. A bad file gets the CLI's line,
// and the menu stays as it was.
async function useGPUFile(f) {
  const before = new Set(Object.keys(gpuByName));
  const was = gpuFile;
  gpuFile = f ? { name: f.name, text: await f.text() } : null;
  clearError();
  const gpus = await loadGPUs();
  if (!gpus) { gpuFile = was; await loadGPUs(); syncControls(); return; }
  const added = gpus.find((g) => !before.has(g.name));
  if (added) state.gpu = added.name;
  if (!gpuByName[state.gpu]) state.gpu = defaultGPU(gpus);
  syncControls();
  if (model) estimate();
}

// loadRuntimes fills the runtime menu with the built-in profiles and the
// runtime file's (runtimeList under the settings), after the default
// choice; null when the call failed.
async function loadRuntimes() {
  const rts = await call("runtimeList", settings());
  if (!rts) return null;
  const sel = $("#runtime");
  sel.innerHTML = `<option value="">default (${esc(choices.defaults.runtime)}; ${esc(choices.defaults.contrib_runtime)} for operators only onnxruntime runs; ${esc(choices.defaults.train_runtime)} with training or autocast)</option>`;
  for (const r of rts) {
    const o = document.createElement("option");
    o.value = r.name;
    o.textContent = r.name;
    o.title = r.description || "";
    sel.append(o);
  }
  return rts;
}

// useRuntimeFile puts file f in force (null: none) as --runtime-file: the
// runtime menu offers its profiles, the first it adds chosen, and the
// model is priced again. A bad file gets the CLI's line, and the menu
// stays as it was.
async function useRuntimeFile(f) {
  const before = new Set([...$("#runtime").options].map((o) => o.value));
  const was = runtimeFile;
  runtimeFile = f ? { name: f.name, text: await f.text() } : null;
  clearError();
  const rts = await loadRuntimes();
  if (!rts) { runtimeFile = was; await loadRuntimes(); syncControls(); return; }
  const added = rts.find((r) => !before.has(r.name));
  if (added) state.runtime = added.name;
  if (state.runtime && !rts.some((r) => r.name === state.runtime)) state.runtime = "";
  syncControls();
  if (model) estimate();
}

// ---- boot ----
async function boot() {
  readHash();
  // serve's model is fetched while the WebAssembly compiles.
  const preload = fetchPreload();
  preload.catch(() => {}); // reported when awaited, below
  api = await connect();
  timing.wasmReady = performance.now();
  $("#version").textContent = api.version;
  const gpus = await loadGPUs();
  if (!gpus) return;
  timing.gpuList = performance.now();
  // The CLI takes a GPU's name in any case, or an alias (--gpu h100);
  // so does the URL.
  if (state.gpu && !gpuByName[state.gpu]) {
    const same = findGPU(gpus, state.gpu);
    if (same) state.gpu = same.name;
    else urlBad.gpu = state.gpu;
  }
  if (!state.gpu || !gpuByName[state.gpu]) state.gpu = defaultGPU(gpus);
  choices = await call("choices");
  if (!choices) return;
  // Every --dtype and --plan value, from the lists the CLI checks the
  // flags against.
  $("#dtype").insertAdjacentHTML("beforeend", (choices.dtypes || []).map((v) => `<option value="${esc(v)}">${esc(v)}</option>`).join(""));
  $("#plans").innerHTML = (choices.plans || []).map((v) => `<label><input type="radio" name="plan" value="${esc(v)}"> ${esc(v)}</label>`).join("");
  const lists = { optimizer: choices.optimizers, checkpoint: choices.checkpoints };
  for (const [k, sel] of textFlags) {
    if (!lists[k]) continue;
    const def = defaultOf(k);
    $(sel).innerHTML = lists[k].map((v) => `<option value="${esc(v)}">${esc(v)}${v === def ? " (default)" : ""}</option>`).join("");
  }
  // No runtime chosen is the CLI's default: the model's, and pytorch for
  // a training step or autocast.
  if (!(await loadRuntimes())) return;
  $("#gpus-n").max = String(choices.max_gpus);
  syncControls();
  wireControls();
  status("");
  body.dataset.state = "empty";
  // `onnxcost serve [MODEL]` offers its first settings and its model at
  // fixed addresses; a static copy of the page has neither.
  try {
    const p = await preload;
    // serve's GPU and runtime files first: the URL may name one of
    // their GPUs or profiles.
    if (p) await applyServedGPUFile(p.info.settings);
    if (p) await applyServedRuntimeFile(p.info.settings);
    noteBadURL(p && p.info.settings);
    if (p) {
      applyServed(p.info.settings);
      if (p.bytes) {
        openModel(p.info.name, p.info.display, p.bytes);
        status("");
      }
    }
  } catch (e) {
    noteBadURL(null);
    showError("onnxcost: " + e.message);
  }
}

// fetchPreload reads what `onnxcost serve [MODEL]` offers at fixed
// addresses: its first settings and its model; null from a static copy
// of the page, which has neither.
async function fetchPreload() {
  const r = await fetch("preload.json", { cache: "no-store" });
  if (!r.ok) return null;
  const info = await r.json();
  if (!info.name) return { info };
  const m = await fetch("preload.onnx", { cache: "no-store" });
  if (!m.ok) throw new Error(`preload.onnx: HTTP ${m.status}`);
  return { info, bytes: new Uint8Array(await m.arrayBuffer()) };
}

// applyServed takes serve's --gpu/--dtype/--batch/--dim/--plan for every
// setting the URL hash leaves unset.
function applyServed(st) {
  if (!st) return;
  const p = new URLSearchParams(location.hash.slice(1));
  if (st.gpu && (!p.get("gpu") || urlBad.gpu) && gpuByName[st.gpu]) state.gpu = st.gpu;
  if (st.dtype && !p.has("dtype")) state.dtype = st.dtype;
  if (st.batch > 0 && (!p.get("batch") || urlBad.batch)) state.batch = st.batch;
  if (st.plan && !p.get("plan")) state.plan = st.plan;
  for (const [k, v] of Object.entries(st.dims || {})) if (!p.has("dim." + k)) state.dims[k] = v;
  for (const [k] of [...textFlags, ...numFlags]) if (st[k] && !p.has(k)) state[k] = st[k];
  if (st.warm && !p.has("warm")) state.warm = true;
  if (st.train && !p.has("train")) state.train = true;
  if (st.calibration && !calibration) calibration = st.calibration;
  syncControls();
}

// applyServedGPUFile takes serve's --gpu-file, and then its --gpu when
// that names one of the file's GPUs (the menu lacked it before).
async function applyServedGPUFile(st) {
  if (!st || !st.gpu_file || gpuFile) return;
  gpuFile = st.gpu_file;
  const gpus = await loadGPUs();
  if (!gpus) return;
  const p = new URLSearchParams(location.hash.slice(1));
  const want = p.get("gpu") && !urlBad.gpu ? p.get("gpu") : st.gpu;
  const g = want && findGPU(gpus, want);
  if (g) { state.gpu = g.name; delete urlBad.gpu; }
  syncControls();
}

// applyServedRuntimeFile takes serve's --runtime-file: its profiles join
// the menu before serve's --runtime (or the URL's) is chosen from it.
async function applyServedRuntimeFile(st) {
  if (!st || !st.runtime_file || runtimeFile) return;
  runtimeFile = st.runtime_file;
  await loadRuntimes();
  syncControls();
}

// noteBadURL says, in one line, which of the URL's values the page could
// not use and what it shows instead: serve's setting (st, null from a
// static copy of the page) or the page's default.
function noteBadURL(st) {
  const parts = [];
  if (urlBad.gpu) {
    const use = st && st.gpu && gpuByName[st.gpu] ? `${st.gpu} (serve's --gpu)` : state.gpu;
    parts.push(`gpu=${urlBad.gpu} is not a GPU onnxcost knows (see 'onnxcost gpus'); showing ${use}`);
  }
  if (urlBad.batch) {
    const use = st && st.batch > 0 ? `batch ${st.batch} (serve's --batch)` : "the default batch";
    parts.push(`batch=${urlBad.batch} is not a whole number above 0; showing ${use}`);
  }
  const n = $("#notice");
  n.textContent = parts.length ? "The page's URL: " + parts.join("; ") + "." : "";
  n.hidden = !parts.length;
}

// defaultOf is a text flag's value when not given. The runtime's is the
// empty choice: graph, or pytorch with --train, as the CLI decides.
function defaultOf(k) {
  return k === "runtime" ? "" : choices.defaults[k];
}

function syncControls() {
  $("#gpu").value = state.gpu;
  $("#dtype").value = state.dtype;
  $("#batch").value = state.batch > 0 ? String(state.batch) : "";
  for (const r of document.querySelectorAll('input[name="plan"]')) r.checked = r.value === state.plan;
  for (const [k, sel] of textFlags) $(sel).value = state[k] || defaultOf(k);
  for (const [k, sel] of numFlags) $(sel).value = state[k] > 0 ? String(state[k]) : "";
  for (const [k, sel] of genFlags) $(sel).value = state[k] ? String(state[k]) : "";
  $("#train").checked = state.train;
  $("#warm").checked = state.warm;
  $("#train").closest(".group").classList.toggle("off", !state.train);
  // The GPU's own limits, as hints: the CLI refuses a cap or clock
  // outside them, and so does the page (with its message).
  const g = gpuByName[state.gpu];
  if (g) {
    $("#power-cap").placeholder = g.tdp_w ? String(g.tdp_w) : "TDP";
    $("#power-cap").title = `board power limit (--power-cap); ${g.name}: ` + (g.min_power_w ? `${g.min_power_w}..${Math.max(g.max_power_w || 0, g.tdp_w)} W` : `up to ${Math.max(g.max_power_w || 0, g.tdp_w)} W`) + "; empty: the TDP";
    $("#sm-clock").placeholder = `≤ ${g.boost_clock_mhz}`;
  }
  $("#cal-name").textContent = calibration ? calibration.name : "none";
  $("#cal-clear").hidden = !calibration;
  $("#gpu-file-name").textContent = gpuFile ? gpuFile.name : "none";
  $("#gpu-file-clear").hidden = !gpuFile;
  $("#runtime-file-name").textContent = runtimeFile ? runtimeFile.name : "none";
  $("#runtime-file-clear").hidden = !runtimeFile;
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", b.dataset.tab === state.tab);
  for (const s of document.querySelectorAll(".tab")) s.hidden = s.id !== "tab-" + state.tab;
}

function wireControls() {
  $("#gpu").addEventListener("change", (e) => { state.gpu = e.target.value; syncControls(); estimate(); });
  $("#dtype").addEventListener("change", (e) => { state.dtype = e.target.value; estimate(); });
  $("#batch").addEventListener("change", (e) => {
    const n = parseInt(e.target.value, 10);
    state.batch = n > 0 ? n : 0;
    estimate();
  });
  for (const r of document.querySelectorAll('input[name="plan"]')) r.addEventListener("change", (e) => { state.plan = e.target.value; estimate(); });
  // The default value is kept as "" (unset), as the CLI's flag left out.
  for (const [k, sel] of textFlags) $(sel).addEventListener("change", (e) => { state[k] = e.target.value === defaultOf(k) ? "" : e.target.value; estimate(); });
  for (const [k, sel, parse] of numFlags) $(sel).addEventListener("change", (e) => {
    const v = parse(e.target.value);
    state[k] = v > 0 ? v : 0;
    estimate();
  });
  $("#train").addEventListener("change", (e) => { state.train = e.target.checked; syncControls(); estimate(); });
  $("#warm").addEventListener("change", (e) => { state.warm = e.target.checked; estimate(); });
  for (const [k, sel, parse] of genFlags) $(sel).addEventListener("change", (e) => {
    state[k] = parse(e.target.value);
    writeHash();
    clearError();
    renderGenerate();
  });
  $("#settings").addEventListener("submit", (e) => e.preventDefault());
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => { state.tab = b.dataset.tab; syncControls(); writeHash(); showTab(); });
  $("#file").addEventListener("change", async (e) => {
    const f = e.target.files[0];
    if (f) { newModelView(); openModel(f.name, f.name, new Uint8Array(await f.arrayBuffer())); }
    e.target.value = "";
  });
  // The setting files: each chooser puts its file in force, × removes it.
  for (const [input, use] of [["#cal-file", useCalibration], ["#gpu-file", useGPUFile], ["#runtime-file", useRuntimeFile]]) {
    $(input).addEventListener("change", async (e) => {
      const f = e.target.files[0];
      if (f) await use(f);
      e.target.value = ""; // choosing the same file again is a change
    });
  }
  $("#cal-clear").addEventListener("click", () => { calibration = null; syncControls(); if (model) estimate(); });
  $("#gpu-file-clear").addEventListener("click", () => useGPUFile(null));
  $("#runtime-file-clear").addEventListener("click", () => useRuntimeFile(null));
  const drop = $("#drop");
  window.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  window.addEventListener("dragleave", () => drop.classList.remove("over"));
  window.addEventListener("drop", async (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const f = e.dataTransfer.files[0];
    if (f && isCalibrationFile(f.name)) await useCalibration(f);
    else if (f) { newModelView(); openModel(f.name, f.name, new Uint8Array(await f.arrayBuffer())); }
  });
  $("#filter").addEventListener("input", renderNodes);
  $("#show-free").addEventListener("change", renderNodes);
  $("#fit").addEventListener("click", () => fitGraph());
  wireGraphTools();
  window.addEventListener("hashchange", () => { readHash(); syncControls(); if (model) estimate(); });
}

// isCalibrationFile: a dropped file named .yaml or .yml is a calibration
// ('onnxcost calibrate -o CAL.yaml'), not a model.
const isCalibrationFile = (name) => /\.ya?ml$/i.test(name);

// useCalibration puts file f in force (as --calibration f) and prices the
// model again; the Go build reads and checks it, and a bad file gets the
// CLI's one line, as any bad setting does.
async function useCalibration(f) {
  calibration = { name: f.name, text: await f.text() };
  syncControls();
  if (model) estimate();
}

// newModelView forgets the graph's open groups, focus and selection: they
// name another model's nodes.
function newModelView() {
  state.open = [];
  state.focus = "";
  selected = null;
  shownGroup = null;
  $("#graph-focus").value = "";
}

// openModel hands the bytes to the wasm (kept there: changing a setting
// re-estimates without reading the file again). name is what messages and
// the report call the model (the CLI names the path it was given).
let opens = 0; // models opened, to drop a superseded open's answer

// viewKey names what a view shows: its kind, the model (the count of
// opens: another model under the same settings is another view) and the
// settings. A tab skips a redraw for the key it last drew.
const viewKey = (kind, st) => `${kind}:${opens}:${st}`;
async function openModel(name, display, bytes) {
  clearError();
  model = null;
  report = null;
  const t = performance.now();
  const gen = ++opens;
  const out = await call("open", name, bytes);
  if (gen !== opens) return; // another model was opened meanwhile
  timing.openMs = performance.now() - t;
  if (!out) return;
  model = { name, display, symbols: out.symbols || [], decoder: !!out.decoder };
  // Generation is offered for a decoder only; another model's tab falls
  // back to the node table.
  $("#generate-tab").hidden = !model.decoder;
  if (state.tab === "generate" && !model.decoder) { state.tab = "nodes"; syncControls(); }
  $("#model-name").textContent = display;
  $("#drop").title = "drop another .onnx here, or click to pick one";
  buildDims();
  estimate();
}

// buildDims offers an input for every symbolic dim; the leading ones are
// bound by batch unless given here.
function buildDims() {
  const box = $("#dims");
  box.innerHTML = "";
  for (const s of model.symbols) {
    const l = document.createElement("label");
    l.title = `symbolic dim of ${s.inputs.join(", ")} (--dim ${s.name}=N)` + (s.leading ? "; batch binds it when left empty" : "");
    l.append("--dim " + s.name + " ");
    const i = document.createElement("input");
    i.type = "number"; i.min = "1"; i.step = "1"; i.dataset.dim = s.name;
    i.placeholder = s.leading ? "batch" : "1";
    if (state.dims[s.name]) i.value = String(state.dims[s.name]);
    i.addEventListener("change", () => {
      const n = parseInt(i.value, 10);
      if (n > 0) state.dims[s.name] = n; else delete state.dims[s.name];
      estimate();
    });
    l.append(i);
    box.append(l);
  }
  // A dim the hash names but the model lacks would be bound for nothing.
  for (const k of Object.keys(state.dims)) if (!model.symbols.some((s) => s.name === k)) delete state.dims[k];
}

// ---- estimate and the views ----
let asked = 0; // estimates asked for, to drop a superseded one's answer
async function estimate() {
  writeHash();
  if (!model) return;
  clearError();
  const t = performance.now();
  const gen = ++asked;
  const r = await call("estimate", settings());
  if (gen !== asked) return;
  if (!r) { report = null; return; }
  report = r.report;
  text = r.text;
  cache = {};
  timing.estimateMs = performance.now() - t;
  $("#main").hidden = false;
  // The report itself, for scripts (#report-json) and as a download: the
  // JSON of 'onnxcost report --format json' under these settings.
  const json = JSON.stringify(report, null, 2) + "\n";
  $("#report-json").textContent = json;
  window.onnxcostReport = report;
  const a = $("#json");
  if (a.href) URL.revokeObjectURL(a.href);
  a.href = URL.createObjectURL(new Blob([json], { type: "application/json" }));
  a.download = (model.display.replace(/\.onnx$/i, "") || "model") + "." + state.gpu + ".json";
  renderTitle();
  renderLines();
  renderCards();
  renderTrain();
  renderWarnings();
  renderNodeNotes();
  renderNodes();
  showTab();
  if (selected) showNode(selected);
  estimates++;
  body.dataset.estimates = String(estimates);
  body.dataset.state = "ready";
  timing.renderMs = performance.now() - t - timing.estimateMs;
  if (timing.firstReport === undefined) timing.firstReport = performance.now();
}

function renderTitle() {
  const b = Object.entries(report.bindings || {}).map(([k, v]) => `${esc(k)}=${v}`).join(", ");
  $("#title").innerHTML = `<b>${esc(model.display)}</b> on <b>${esc(report.gpu)}</b>, dtype ${esc(report.dtype)}, ${esc(report.plan)} plan` +
    (b ? `, ${b}` : "") + (report.calibration_file ? ` · calibrated by <b>${esc(report.calibration_file)}</b>` : "") +
    ` <span class="muted" title="${esc(report.flop_convention)}">· cost model ${esc(report.cost_model_version)} · ${esc(report.flop_convention.split(";")[0])}</span>`;
}

function renderCards() {
  const t = report.totals;
  const g = gpuByName[report.gpu] || {};
  const batch = state.batch > 0 ? state.batch : 0;
  // [JSON field, label, sub-line, main]; the value is the CLI's text.
  const per = t.gpus > 1 ? ` on ${t.gpus} GPUs` : "";
  const running = (t.gpus || 1) * (t.train ? t.train.data_parallel || 1 : 1);
  const cards = [
    ["time_s", t.train ? "training step" : "time", (batch ? `${grouped(batch / t.time_s)} samples/s` : `${grouped(1 / t.time_s)} ${t.train ? "steps" : "runs"}/s`) + per, true],
    // A training step's FLOPs card is the forward pass (totals.flops);
    // its rate is the whole step's work over the step's time.
    ["flops", t.train ? "FLOPs (forward)" : "FLOPs", t.time_s > 0 ? `${si((t.train ? t.train.forward_flops + t.train.backward_flops + t.train.optimizer_flops : t.flops) / t.time_s, "FLOP/s")} achieved${t.train ? " over the step" : ""}` : ""],
    ["macs", "MACs", `${text.transcendentals} transcendentals`],
    ["bytes", "bytes moved", `${text.bytes_read} read, ${text.bytes_written} written`],
    ["launches", "kernel launches", `${text.nodes} nodes`],
    t.gpus > 1
      ? ["per_gpu_peak_memory_bytes", "peak memory per GPU", g.mem_bytes ? `${pct(t.per_gpu_peak_memory_bytes / g.mem_bytes)} of ${bytes(g.mem_bytes)}; whole ${text.peak_memory_bytes}` : ""]
      : ["peak_memory_bytes", "peak memory", g.mem_bytes ? `${pct(t.peak_memory_bytes / g.mem_bytes)} of ${bytes(g.mem_bytes)}` : ""],
    // On several GPUs (tensor parallel, a step's data-parallel replicas)
    // energy_j and avg_power_w are one GPU's (render.GPUsRunning).
    ["energy_j", running > 1 ? "energy per GPU" : "energy", (running > 1 ? `${joules(t.energy_j * running)} for the ${running} · ` : "") + (t.avg_power_w ? `${t.avg_power_w.toFixed(0)} W average` : "") +
      (t.power_cap_w ? ` · cap ${t.power_cap_w} W` : "") + (t.sm_clock_cap_mhz ? ` · SM ≤ ${t.sm_clock_cap_mhz} MHz` : "")],
    ["params", "parameters", text.param_bytes],
    ["gemm_conv_time_share", "GEMM + conv", "of the time"],
  ];
  if (t.gpus > 1) cards.splice(1, 0, ["communication_time_s", "all-reduce", `${pct(t.communication_time_s / t.time_s)} of the time, ${t.gpus}-way tensor parallel`]);
  // data-value carries the JSON number exactly (JS prints the shortest
  // string that reads back as the same float64), for tests and scripts.
  const value = (k) => (k === "bytes" ? t.bytes_read + t.bytes_written : t[k]);
  $("#cards").innerHTML = cards.map(([k, label, sub, main]) =>
    `<div class="card${main ? " main" : ""}"><div class="k">${label}</div><div class="v" data-total="${k}" data-value="${value(k)}">${esc(text[k])}</div><div class="s">${esc(sub)}</div></div>`).join("") +
    `<div hidden>${["bytes_read", "bytes_written", "nodes", "transcendentals", "param_bytes", "peak_activation_bytes", "peak_memory_bytes",
      "avg_power_w", "power_cap_w", "sm_clock_cap_mhz", "gpus", "communication_time_s", "per_gpu_peak_memory_bytes"]
      .filter((k) => t[k] !== undefined).map((k) => `<span data-total="${k}" data-value="${t[k]}"></span>`).join("")}</div>`;
}

// renderLines shows the lines the CLI's text report prints under its
// header (cost/render): the memory verdict, the runtime profile, a
// training step's phases, and how far to trust the time (its 80%
// interval).
function renderLines() {
  const ls = [text.fit_line, text.runtime_line, text["train.step_line"], text.interval_line].filter(Boolean);
  $("#lines").innerHTML = ls.map((l) => `<div class="${/DOES NOT FIT/.test(l) ? "bad" : ""}" title="${esc(l)}">${esc(l)}</div>`).join("");
}

// renderTrain shows a training step (--train): its time and FLOPs by
// phase and its device memory by part, each figure in the CLI's units.
function renderTrain() {
  const tr = report.totals.train;
  const box = $("#train-box");
  box.hidden = !tr;
  if (!tr) { box.innerHTML = ""; return; }
  const cell = (k, v) => `<td class="num" data-total="train.${k}" data-value="${v}">${esc(text["train." + k])}</td>`;
  const phases = [["forward", "forward_time_s", "forward_flops"], ["backward", "backward_time_s", "backward_flops"], ["optimizer (" + tr.optimizer + ")", "optimizer_time_s", "optimizer_flops"]];
  if (tr.recompute_time_s > 0) phases.splice(1, 0, [`recompute (checkpoint ${tr.checkpoint})`, "recompute_time_s", ""]);
  const m = tr.memory;
  const parts = [["weights_bytes", "weights", "#3b82c4"], ["master_weights_bytes", "fp32 master weights", "#7aa6d6"], ["gradients_bytes", "gradients", "#e8743b"],
    ["optimizer_state_bytes", "optimizer state", "#9c6ade"], ["activations_bytes", "activations kept for backward", "#59a14f"],
    ["workspace_bytes", "workspace", "#b0b6bf"], ["runtime_bytes", "runtime (context)", "#6b7380"]];
  const sum = parts.reduce((a, [k]) => a + m[k], 0) || 1;
  box.innerHTML = `<h4>training step${tr.mixed_precision ? " · mixed precision" : ""}</h4><div class="cols">` +
    `<table><tr><td></td><td class="num muted">time</td><td class="num muted">FLOPs</td></tr>` +
    phases.map(([l, tk, fk]) => `<tr><td>${esc(l)}</td>${cell(tk, tr[tk])}${fk ? cell(fk, tr[fk]) : "<td></td>"}</tr>`).join("") +
    `<tr><td><b>step</b></td>${cell("step_time_s", tr.step_time_s)}<td></td></tr></table>` +
    (tr.epoch ? `<div class="muted" id="epoch" data-time="${tr.epoch.time_s}" data-energy="${tr.epoch.energy_j}" data-steps="${tr.epoch.steps}">${esc(text["train.epoch_line"] || "")}</div>` : "") +
    `<div style="flex:1;min-width:340px"><div>device memory: peak <b data-total="train.memory.peak_bytes" data-value="${m.peak_bytes}">${esc(text["train.memory.peak_bytes"])}</b> in ${esc(m.peak_phase)} ` +
    `<span class="muted">(<span data-total="train.memory.tensor_peak_bytes" data-value="${m.tensor_peak_bytes}">${esc(text["train.memory.tensor_peak_bytes"])}</span> tensors)</span></div>` +
    `<div class="stack">${parts.filter(([k]) => m[k] > 0).map(([k, l, c]) => `<span style="width:${(100 * m[k] / sum).toFixed(2)}%;background:${c}" title="${esc(l)}: ${esc(text["train.memory." + k])}"></span>`).join("")}</div>` +
    `<table>${parts.map(([k, l, c]) => `<tr><td><span class="sw" style="background:${c}"></span>${esc(l)}</td>${cell("memory." + k, m[k])}</tr>`).join("")}</table></div></div>` +
    ((tr.notes || []).length ? `<details><summary class="muted">${tr.notes.length} note${tr.notes.length > 1 ? "s" : ""}</summary><ul>${tr.notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul></details>` : "");
}

// renderNodeNotes lists the costed nodes' notes as the text report does
// under its totals (one line per distinct note, most time first): a slow
// library fallback or an approximation the estimate rests on.
function renderNodeNotes() {
  const ls = text.node_notes ? text.node_notes.split("\n") : [];
  const box = $("#nodenotes");
  box.hidden = ls.length === 0;
  box.innerHTML = ls.length ? `<details><summary>node notes, most time first: ${esc(ls[0])}</summary><ul>${ls.map((l) => `<li>${esc(l)}</li>`).join("")}</ul><span class="muted">click a node for its own note</span></details>` : "";
}

function renderWarnings() {
  const w = report.warnings || [];
  const box = $("#warnings");
  box.hidden = w.length === 0;
  const uns = (report.unsupported_ops || []).map((u) => `${u.op_type} ×${u.count}`);
  box.innerHTML = w.length ? `<details><summary>${w.length} warning${w.length > 1 ? "s" : ""}: ${esc(w[0])}</summary><ul>${w.map((x) => `<li>${esc(x)}</li>`).join("")}</ul>${uns.length ? "Ops with no cost rule: " + esc(uns.join(", ")) : ""}</details>` : "";
}

function showTab() {
  if (!report) return;
  if (state.tab === "graph") renderGraph();
  else if (state.tab === "roofline") renderRoofline();
  else if (state.tab === "compare") renderCompare();
  else if (state.tab === "gpus") renderGPUs();
  else if (state.tab === "generate") renderGenerate();
}

// ---- node table ----
const isFree = (n) => n.time_s === 0 && n.launches === 0 && n.flops === 0 && n.bytes_read + n.bytes_written === 0;
const nodeCols = [
  ["idx", "#", (n) => n._i],
  ["name", "name", (n) => n.name, "l name"],
  ["op", "op", (n) => (n.domain ? n.domain + "." : "") + n.op_type, "l"],
  ["time_s", "time", (n) => n.time_s],
  ["bwd", "backward", (n) => (n.backward ? n.backward.time_s : 0), "", true],
  ["share", "share", (n) => n.time_s],
  ["flops", "FLOPs", (n) => n.flops],
  ["bytes", "bytes", (n) => n.bytes_read + n.bytes_written],
  ["ai", "FLOP/B", (n) => n.arithmetic_intensity],
  ["bound", "bound", (n) => n.bound || "", "l"],
  ["launches", "launches", (n) => n.launches],
  ["precision", "precision", (n) => n.precision || "", "l"],
  ["fused", "fused", (n) => (n.fused_from || []).length],
];

function renderNodes() {
  if (!report) return;
  const thead = $("#nodes thead");
  // The backward column shows only for a training step (--train).
  const cols = nodeCols.filter((c) => !c[4] || report.totals.train);
  if (!cols.some((c) => c[0] === sortKey)) sortKey = "time_s";
  thead.innerHTML = "<tr>" + cols.map(([k, label, , cls]) => `<th data-k="${k}" class="${cls || ""}${k === sortKey ? " sorted" + (sortAsc ? " asc" : "") : ""}">${label}</th>`).join("") + "</tr>";
  for (const th of thead.querySelectorAll("th")) th.addEventListener("click", () => {
    if (sortKey === th.dataset.k) sortAsc = !sortAsc; else { sortKey = th.dataset.k; sortAsc = ["name", "op", "bound", "precision", "idx"].includes(sortKey); }
    renderNodes();
  });
  const total = report.totals.time_s || 1;
  const max = Math.max(...report.nodes.map((n) => n.time_s), 0) || 1;
  let re = null;
  try { const f = $("#filter").value.trim(); if (f) re = new RegExp(f, "i"); } catch { re = null; }
  const free = $("#show-free").checked;
  report.nodes.forEach((n, i) => (n._i = i + 1));
  let rows = report.nodes.filter((n) => (free || !isFree(n)) && (!re || re.test(n.name) || re.test(n.op_type) || re.test(n.bound || "")));
  const get = nodeCols.find((c) => c[0] === sortKey)[2];
  rows.sort((a, b) => { const x = get(a), y = get(b); const c = x < y ? -1 : x > y ? 1 : a._i - b._i; return sortAsc ? c : -c; });
  $("#filter-count").textContent = `${rows.length} of ${report.nodes.length} nodes`;
  $("#nodes tbody").innerHTML = rows.map((n) => {
    const b = n.bound ? `<span class="bound ${esc(ceilingOf(n))}">${esc(ceilingOf(n))}</span>` : "";
    return `<tr data-name="${esc(n.name)}"${n.name === selected ? ' class="sel"' : ""}><td>${n._i}</td><td class="l name" title="${esc(n.name)}">${esc(n.name)}</td><td class="l">${esc((n.domain ? n.domain + "." : "") + n.op_type)}</td>` +
      `<td>${secs(n.time_s)}</td>${report.totals.train ? `<td>${n.backward ? secs(n.backward.time_s) : "-"}</td>` : ""}<td class="l"><span class="bar" style="width:${(40 * n.time_s / max).toFixed(1)}px"></span>${pct(n.time_s / total)}</td>` +
      `<td>${flops(n.flops)}</td><td>${bytes(n.bytes_read + n.bytes_written)}</td><td>${n.arithmetic_intensity ? sig(n.arithmetic_intensity) : "-"}</td>` +
      `<td class="l">${b}</td><td>${count(n.launches)}</td><td class="l">${esc(n.precision || "")}</td><td>${(n.fused_from || []).length || ""}</td></tr>`;
  }).join("");
  for (const tr of $("#nodes tbody").querySelectorAll("tr")) tr.addEventListener("click", () => showNode(tr.dataset.name));
}

// ceilingOf names the roof that binds a node, as viz does (viz/roof.go).
function ceilingOf(n) {
  if (n.bound === "memory") return n.mem_level === "l2" ? "L2" : "HBM";
  return n.bound || "";
}

function shape(t) {
  const s = t.shape === null ? "?" : "[" + t.shape.join("×") + "]";
  return `${esc(t.name)} <span class="muted">${esc(t.dtype)} ${esc(s)}</span>`;
}

// showNode opens the detail panel of a report node: its numbers and what
// the passes fused into it.
function showNode(name) {
  const n = report && report.nodes.find((x) => x.name === name);
  const d = $("#detail");
  if (!n) { d.hidden = true; selected = null; return; }
  selected = name;
  for (const tr of document.querySelectorAll("#nodes tbody tr")) tr.classList.toggle("sel", tr.dataset.name === name);
  const t = report.totals.time_s || 1;
  const rows = [
    ["op", (n.domain ? n.domain + "." : "") + n.op_type], ["time", `${secs(n.time_s)} (${pct(n.time_s / t)})`],
    ["compute", secs(n.compute_s)], ["memory", secs(n.memory_s)], ["launch", secs(n.launch_s)],
    ["bound", ceilingOf(n) || "no kernel"], ["precision", n.precision || "–"],
    ["FLOPs", flops(n.flops)], ["MACs", si(n.macs, "MAC")], ["transcendentals", si(n.transcendentals, "")],
    ["read", bytes(n.bytes_read)], ["written", bytes(n.bytes_written)], ["intensity", n.arithmetic_intensity ? sig(n.arithmetic_intensity) + " FLOP/B" : "-"],
    ["params", si(n.params, "")], ["launches", count(n.launches)], ["energy", joules(n.energy_j)],
  ];
  shownGroup = null;
  d.innerHTML = `<button class="close" title="close">×</button><h3>${esc(n.name)}</h3>` +
    `<div class="acts"><button data-act="show" title="open the groups around it in the graph">show in graph</button><button data-act="focus" title="keep this node and its producers and consumers; fold the rest">focus on neighbourhood</button></div><table>${rows.map(([k, v]) => `<tr><td>${k}</td><td class="num">${esc(v)}</td></tr>`).join("")}</table>` +
    (n.note ? `<p>${esc(n.note)}</p>` : "") +
    ((n.fused_from || []).length ? `<b>Fused from ${n.fused_from.length} nodes</b><ul>${n.fused_from.map((f) => `<li>${esc(f)}</li>`).join("")}</ul>` : "") +
    `<b>Inputs</b><ul>${(n.inputs || []).map((x) => `<li>${shape(x)}</li>`).join("")}</ul><b>Outputs</b><ul>${(n.outputs || []).map((x) => `<li>${shape(x)}</li>`).join("")}</ul>`;
  d.hidden = false;
  d.querySelector(".close").addEventListener("click", () => { d.hidden = true; selected = null; renderNodes(); renderCrumbs(); });
  d.querySelector('[data-act="show"]').addEventListener("click", () => reveal(name));
  d.querySelector('[data-act="focus"]').addEventListener("click", () => { if (state.tab !== "graph") { state.tab = "graph"; syncControls(); } focusOn(name); });
  if (state.tab === "graph") renderCrumbs();
  for (const g of document.querySelectorAll("#graph g.node")) g.classList.toggle("sel", g.id === "node:" + sanitizeID(name));
}

// showGroup shows a group of the graph (viz.Group): its name, what it
// holds, and the control that opens or folds it again.
function showGroup(grp) {
  const d = $("#detail");
  selected = null;
  shownGroup = grp;
  const isOpen = grp.key && state.open.includes(grp.key);
  const kind = { scope: "scope", repeat: "identical blocks drawn as one", fold: "boxes folded away" }[grp.kind] || grp.kind;
  d.innerHTML = `<button class="close">×</button><h3 data-group="${esc(grp.id)}">${esc(grp.name)}</h3>` +
    `<p class="muted">${esc(kind)} · ${grouped(grp.members)} node${grp.members === 1 ? "" : "s"} · ${esc(grp.ops)}</p>` +
    `<table><tr><td>time</td><td class="num">${secs(grp.time_s)} (${pct(grp.share)})</td></tr></table>` +
    `<div class="acts">${grp.key ? (isOpen ? `<button data-act="close">collapse</button>` : `<button data-act="open">expand</button>`) : ""}</div>` +
    `<b>Costliest members</b><ul>${(grp.costliest || []).map((n) => `<li><a href="#" data-name="${esc(n)}">${esc(n)}</a></li>`).join("")}</ul>`;
  d.hidden = false;
  d.querySelector(".close").addEventListener("click", () => { d.hidden = true; shownGroup = null; renderCrumbs(); });
  const act = d.querySelector(".acts button");
  if (act) act.addEventListener("click", () => (act.dataset.act === "open" ? openGroup(grp) : (closeGroup(grp.key), showGroup(grp))));
  for (const a of d.querySelectorAll("a[data-name]")) a.addEventListener("click", (e) => { e.preventDefault(); reveal(a.dataset.name); });
  renderCrumbs();
}

// ---- graph: viz.DOT laid out by Graphviz (WebAssembly, vendored) ----
let graphviz = null;
let view = null; // the graph's viewBox: {x, y, w, h, W, H}

// sanitizeID is viz's id rule (viz/units.go): the SVG id of a node box is
// "node:" + the sanitized node name.
function sanitizeID(s) { return s === "" ? "_" : s.replace(/[^a-zA-Z0-9_\-./:]/g, "_"); }

async function renderGraph(reveal) {
  const key = viewKey("graph", drawSettings());
  const box = $("#graph");
  if (!reveal && box.dataset.key === key) return;
  let views;
  const gen = ++draws;
  const t0 = performance.now();
  if (reveal) {
    // Draw opens the groups around the node; the page keeps them open.
    views = await call("draw", drawSettings(reveal));
    if (!views || gen !== draws) return;
    state.open = views.expanded;
    writeHash();
    cache[viewKey("views", drawSettings())] = Promise.resolve(views);
  } else {
    views = await viewsFor();
    if (!views || gen !== draws || key !== viewKey("graph", drawSettings())) return;
  }
  timing.drawMs = performance.now() - t0;
  $("#graph-status").textContent = "laying out…";
  const t = performance.now();
  if (!graphviz) {
    const mod = await import("./vendor/graphviz.js");
    graphviz = await mod.Graphviz.load();
  }
  let svg;
  try { svg = graphviz.dot(views.dot); } catch (e) { $("#graph-status").textContent = "Graphviz failed: " + e.message; return; }
  timing.graphMs = performance.now() - t;
  groups = {};
  for (const g of views.groups) groups[g.id] = g;
  graphDepth = views.depth;
  box.innerHTML = svg.replace(/^[\s\S]*?(<svg)/, "$1");
  box.dataset.key = viewKey("graph", drawSettings());
  box.dataset.boxes = String(views.groups.length);
  $("#graph-status").textContent = `${views.groups.length} boxes, laid out in ${timing.graphMs.toFixed(0)} ms`;
  const el = box.querySelector("svg");
  el.removeAttribute("width"); el.removeAttribute("height");
  const vb = el.viewBox.baseVal;
  view = { x: vb.x, y: vb.y, w: vb.width, h: vb.height, W: vb.width, H: vb.height, X: vb.x, Y: vb.y };
  fitGraph.toggled = false;
  fitGraph();
  wirePanZoom(el);
  for (const a of el.querySelectorAll("a")) a.addEventListener("click", (e) => e.preventDefault());
  for (const g of el.querySelectorAll("g.node")) {
    g.addEventListener("click", () => {
      if (moved) return;
      const grp = groups[g.id];
      if (!grp) return; // the legend, a graph input or output
      if (grp.kind === "node") return showNode(grp.name);
      openGroup(grp);
    });
  }
  if (selected) { showNode(selected); centerOn("node:" + sanitizeID(selected)); } else if (shownGroup) showGroup(shownGroup);
  // The members of a group just opened, rather than the top of the graph.
  // A node stands in its scope by name, or (a dynamo export's nodes,
  // named without their modules) by the path its group carries.
  const member = pendingCenter && views.groups.find((g) => under(g.kind === "node" ? g.name : g.path, pendingCenter) ||
    (g.kind === "node" && g.path !== "" && under(g.path, pendingCenter)));
  if (member && !selected) centerOn(member.id);
  pendingCenter = "";
  renderCrumbs();
  timing.expandMs = performance.now() - t0;
  body.dataset.graph = String(++graphsDrawn);
}

let draws = 0, graphsDrawn = 0;
let groups = {};       // the drawn boxes by SVG id (viz.Group)
let graphDepth = 0;    // the depth scopes were collapsed to
let shownGroup = null; // the group the panel shows
let pendingCenter = ""; // the path of a group just opened: shown first

// pathOf is the scope path an open key stands for.
const pathOf = (k) => k.replace(/^repeat:/, "");
// under says whether path p lies in scope q (or is q).
const under = (p, q) => p === q || p.startsWith(q + "/");

// openGroup draws a folded box's members, the rest as it was.
function openGroup(grp) {
  if (grp.key && !state.open.includes(grp.key)) state.open = state.open.concat(grp.key);
  pendingCenter = grp.kind === "fold" ? grp.costliest[0] : grp.path;
  selected = null;
  showGroup(grp);
  writeHash();
  renderGraph();
}

// closeGroup folds an open group again, with whatever was opened in it.
function closeGroup(key) {
  const p = pathOf(key);
  state.open = state.open.filter((k) => k !== key && !(p && !k.startsWith("fold:") && under(pathOf(k), p)));
  writeHash();
  renderGraph();
}

// showCrumb shows the scope path as it is down to p: whatever was opened
// below p folds again; p itself stays open ("" is the whole model).
function showCrumb(p) {
  selected = null;
  shownGroup = null;
  $("#detail").hidden = true;
  if (!p) state.open = [];
  else {
    state.open = state.open.filter((k) => k.startsWith("fold:") || !under(pathOf(k), p) || pathOf(k) === p);
    const parts = p.split("/").filter(Boolean);
    for (let i = Math.max(1, Math.min(graphDepth, parts.length)); i <= parts.length; i++) {
      const q = "/" + parts.slice(0, i).join("/");
      if (!state.open.includes(q)) state.open.push(q);
    }
    if (!state.open.includes("repeat:" + p)) state.open.push("repeat:" + p);
  }
  writeHash();
  renderGraph();
}

// renderCrumbs shows the scope path of what the panel shows (a node or a
// group), or of the group opened last; each crumb shows the graph open
// down to that scope.
function renderCrumbs() {
  const nav = $("#crumbs");
  let p = "";
  if (selected) p = selected.includes("/") ? selected.slice(0, selected.lastIndexOf("/")) : "";
  else if (shownGroup) p = shownGroup.path;
  else if (state.open.length) p = pathOf(state.open[state.open.length - 1]);
  if (p.startsWith("fold:")) p = "";
  const parts = p.split("/").filter(Boolean);
  let html = `<button data-p="" class="${parts.length ? "" : "here"}" title="fold every group again">whole model</button>`;
  parts.forEach((c, i) => {
    const q = "/" + parts.slice(0, i + 1).join("/");
    html += `<span class="sep">›</span><button data-p="${esc(q)}" class="${i === parts.length - 1 ? "here" : ""}" title="${esc(q)}">${esc(c)}</button>`;
  });
  if (state.open.length) html += `<span class="chip muted">${state.open.length} open</span>`;
  if (state.focus) html += `<span class="chip">focus: ${esc(state.focus.length > 60 ? state.focus.slice(0, 57) + "…" : state.focus)} <button data-clear="focus" title="clear the focus">×</button></span>`;
  nav.innerHTML = html;
  for (const b of nav.querySelectorAll("button[data-p]")) b.addEventListener("click", () => showCrumb(b.dataset.p));
  const c = nav.querySelector("button[data-clear]");
  if (c) c.addEventListener("click", () => setFocus(""));
}

function setFocus(re) {
  state.focus = re;
  $("#graph-focus").value = re;
  writeHash();
  renderGraph();
}

// neighbours are a node's producers and consumers in the report.
function neighbours(n) {
  const ins = new Set((n.inputs || []).map((x) => x.name)), outs = new Set((n.outputs || []).map((x) => x.name));
  const out = [];
  for (const m of report.nodes) {
    if (m === n || isFree(m)) continue;
    if ((m.outputs || []).some((x) => ins.has(x.name)) || (m.inputs || []).some((x) => outs.has(x.name))) out.push(m.name);
  }
  return out.slice(0, 24);
}
const reQuote = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// focusOn keeps a node and its neighbours and folds the rest.
function focusOn(name) {
  const n = report.nodes.find((x) => x.name === name);
  if (!n) return;
  selected = name;
  setFocus("^(" + [name, ...neighbours(n)].map(reQuote).join("|") + ")$");
}

// centerOn pans the graph to a box.
function centerOn(id) {
  const el = $("#graph svg"), g = el && document.getElementById(id);
  if (!g || !view) return;
  const bb = g.getBBox();
  const m = /translate\(([-\d.]+)[ ,]+([-\d.]+)\)/.exec(el.querySelector("g.graph")?.getAttribute("transform") || "");
  const tx = m ? +m[1] : 0, ty = m ? +m[2] : 0;
  view.x = bb.x + tx + bb.width / 2 - view.w / 2;
  view.y = bb.y + ty + bb.height / 2 - view.h / 2;
  setView(el);
}

// wireGraphTools: search by name or op type, and the focus pattern.
function wireGraphTools() {
  const input = $("#graph-search"), list = $("#search-results");
  input.addEventListener("input", () => {
    const q = input.value.trim().toLowerCase();
    if (!q || !report) { list.hidden = true; return; }
    const hits = report.nodes.filter((n) => !isFree(n) && (n.name.toLowerCase().includes(q) || n.op_type.toLowerCase().includes(q)))
      .sort((a, b) => b.time_s - a.time_s);
    list.innerHTML = hits.slice(0, 30).map((n) => `<li data-name="${esc(n.name)}" title="${esc(n.name)}">${esc(n.name)} <span class="muted">${esc(n.op_type)} · ${secs(n.time_s)}</span></li>`).join("") +
      (hits.length > 30 ? `<li class="muted">… ${hits.length - 30} more: type more of the name</li>` : "") + (hits.length ? "" : `<li class="muted">no node that runs a kernel matches</li>`);
    list.hidden = false;
    for (const li of list.querySelectorAll("li[data-name]")) li.addEventListener("click", () => reveal(li.dataset.name));
  });
  input.addEventListener("keydown", (e) => {
    const first = list.querySelector("li[data-name]");
    if (e.key === "Enter" && first) reveal(first.dataset.name);
    if (e.key === "Escape") list.hidden = true;
  });
  $("#graph-focus").value = state.focus;
  $("#graph-focus").addEventListener("change", (e) => {
    const v = e.target.value.trim();
    try { new RegExp(v); } catch { $("#graph-status").textContent = "focus: not a regular expression"; return; }
    setFocus(v);
  });
}

// reveal selects a node in the graph, opening the groups around it.
function reveal(name) {
  $("#search-results").hidden = true;
  selected = name;
  shownGroup = null;
  showNode(name);
  if (state.tab !== "graph") { state.tab = "graph"; syncControls(); }
  renderGraph(name);
}

function setView(el) { el.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`); }
function fitGraph() {
  const el = $("#graph svg");
  if (!el || !view) return;
  // Start readable: a graph larger than the box opens at its top at
  // about Graphviz's own size (one unit a pixel), not as an unreadable
  // whole; "fit" then toggles to the whole graph and back.
  const box = $("#graph").getBoundingClientRect();
  const atWhole = view.w === view.W && view.h === view.H;
  const fits = view.W <= box.width && view.H <= box.height;
  if (fits || (!atWhole && fitGraph.toggled)) {
    Object.assign(view, { x: view.X, y: view.Y, w: view.W, h: view.H });
  } else {
    const w = box.width, h = box.height;
    Object.assign(view, { x: view.X + (view.W - w) / 2, y: view.Y, w, h });
  }
  fitGraph.toggled = true;
  setView(el);
}
let moved = false;
function wirePanZoom(el) {
  let drag = null;
  el.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y }; moved = false; });
  window.addEventListener("mouseup", () => (drag = null));
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const r = el.getBoundingClientRect();
    const s = Math.max(view.w / r.width, view.h / r.height);
    if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 3) moved = true;
    view.x = drag.vx - (e.clientX - drag.x) * s;
    view.y = drag.vy - (e.clientY - drag.y) * s;
    setView(el);
  });
  el.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = el.getBoundingClientRect();
    const s = Math.max(view.w / r.width, view.h / r.height);
    const f = Math.exp(e.deltaY * 0.0015);
    const mx = view.x + (e.clientX - r.left) * s, my = view.y + (e.clientY - r.top) * s;
    view.x = mx - (mx - view.x) * f; view.y = my - (my - view.y) * f;
    view.w *= f; view.h *= f;
    setView(el);
  }, { passive: false });
}

// cached is the call's answer under the current settings, asked once
// per settings (an error is asked again next time).
async function cached(kind, fn) {
  const key = viewKey(kind, settings());
  const c = cache;
  if (!(key in c)) c[key] = call(fn, settings());
  const v = await c[key];
  if (v === null) delete c[key];
  return v;
}

// viewsFor is draw's answer for the graph as the page shows it now
// (with no roofline: the graph view is sent, see session.Draw).
function viewsFor() {
  const key = viewKey("views", drawSettings());
  if (!(key in cache)) cache[key] = call("draw", drawSettings());
  return cache[key].then((v) => { if (v === null) delete cache[key]; return v; });
}

// ---- roofline, drawn from viz.RoofOf's placements ----
async function renderRoofline() {
  const box = $("#roofline");
  const key = viewKey("roof", settings());
  if (box.dataset.key === key) return;
  const v = await cached("roof", "draw");
  if (!v || key !== viewKey("roof", settings())) return;
  box.dataset.key = key;
  const rf = v.roofline;
  const pts = rf.points, un = rf.unfused || [];
  const all = pts.concat(un);
  if (!all.length) { box.innerHTML = "<p>No node has both FLOPs and bytes: nothing to place on log axes.</p>"; return; }
  const peaks = Object.entries(rf.peaks).filter(([, p]) => p > 0).sort((a, b) => b[1] - a[1]);
  const W = 900, H = 540, L = 70, R = 150, T = 20, B = 46;
  const lo = (v) => Math.pow(10, Math.floor(Math.log10(v)));
  const hi = (v) => Math.pow(10, Math.ceil(Math.log10(v)));
  const x0 = lo(Math.min(...all.map((p) => p.ai))), x1 = hi(Math.max(...all.map((p) => p.ai), ...peaks.map(([, p]) => p / rf.hbm_bw)));
  const y0 = lo(Math.min(...all.map((p) => p.achieved))), y1 = hi(Math.max(...all.map((p) => p.achieved), ...peaks.map(([, p]) => p)));
  const X = (v) => L + ((Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * (W - L - R);
  const Y = (v) => H - B - ((Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * (H - T - B);
  const total = report.totals.time_s || 1;
  const color = { compute: "var(--compute)", HBM: "var(--hbm)", L2: "var(--l2)", latency: "var(--latency)", launch: "var(--launch)" };
  let s = `<svg viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg"><rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="#fff" stroke="#ccc"/>`;
  for (let d = x0; d <= x1 * 1.001; d *= 10) s += `<line x1="${X(d)}" x2="${X(d)}" y1="${T}" y2="${H - B}" stroke="#eee"/><text x="${X(d)}" y="${H - B + 14}" text-anchor="middle">${si(d, "").trim()}</text>`;
  for (let d = y0; d <= y1 * 1.001; d *= 10) s += `<line x1="${L}" x2="${W - R}" y1="${Y(d)}" y2="${Y(d)}" stroke="#eee"/><text x="${L - 6}" y="${Y(d) + 4}" text-anchor="end">${si(d, "").trim()}</text>`;
  s += `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">arithmetic intensity (FLOP/byte)</text><text transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">estimated FLOP/s</text>`;
  // Roofs: min(peak, AI × bandwidth) for HBM and L2, each precision's peak.
  const clipX = (v) => Math.min(Math.max(v, x0), x1);
  for (const [bw, name, dash] of [[rf.hbm_bw, "HBM", ""], [rf.l2_bw, rf.l2_assumed ? "L2 (assumed)" : "L2", "5 4"]]) {
    if (!(bw > 0)) continue;
    const top = peaks.length ? peaks[0][1] : y1;
    const xa = clipX(Math.max(x0, y0 / bw)), xb = clipX(top / bw);
    s += `<line x1="${X(xa)}" y1="${Y(xa * bw)}" x2="${X(xb)}" y2="${Y(xb * bw)}" stroke="#333" stroke-width="1.5" stroke-dasharray="${dash}"/>`;
    // Name the diagonal a third of the way along, rotated with it.
    const xm = Math.pow(10, (2 * Math.log10(xa) + Math.log10(xb)) / 3);
    const ang = (Math.atan2(Y(xb * bw) - Y(xa * bw), X(xb) - X(xa)) * 180) / Math.PI;
    s += `<text transform="translate(${X(xm)} ${Y(xm * bw) - 5}) rotate(${ang.toFixed(1)})" fill="#333">${name} ${si(bw, "B/s")}</text>`;
  }
  peaks.forEach(([p, v], i) => {
    const bw = rf.hbm_bw > 0 ? rf.hbm_bw : 0;
    const xa = bw ? clipX(v / bw) : x0;
    s += `<line x1="${X(xa)}" y1="${Y(v)}" x2="${X(x1)}" y2="${Y(v)}" stroke="#333" stroke-width="1.5" stroke-dasharray="${i ? "2 3" : ""}"/><text x="${W - R + 4}" y="${Y(v) + 4}">${esc(p)} ${si(v, "FLOP/s")}</text>`;
  });
  const r = (p) => 2.5 + 14 * Math.sqrt(p.time_s / total);
  for (const p of un) s += `<circle class="pt" cx="${X(p.ai)}" cy="${Y(p.achieved)}" r="${r(p)}" fill="none" stroke="${color[p.ceiling] || "#999"}" stroke-width="1.5" opacity=".9" data-name="${esc(p.name)}" data-plan="unfused"><title>unfused ${esc(p.name)} (${esc(p.op_type)}): ${secs(p.time_s)}, ${sig(p.ai)} FLOP/B, ${si(p.achieved, "FLOP/s")}, ${esc(p.ceiling)}-bound</title></circle>`;
  for (const p of pts) s += `<circle class="pt" cx="${X(p.ai)}" cy="${Y(p.achieved)}" r="${r(p)}" fill="${color[p.ceiling] || "#999"}" fill-opacity=".85" stroke="#777" stroke-width=".5" data-name="${esc(p.name)}"><title>${esc(p.name)} (${esc(p.op_type)}): ${secs(p.time_s)}, ${sig(p.ai)} FLOP/B, ${si(p.achieved, "FLOP/s")}, ${esc(p.ceiling)}-bound</title></circle>`;
  // Name the costliest points, skipping a label that would overprint one
  // already placed.
  const placed = [];
  for (const p of pts.slice().sort((a, b) => b.time_s - a.time_s).slice(0, 12)) {
    const label = p.name.length > 28 ? "…" + p.name.slice(-27) : p.name;
    const lx = X(p.ai) + r(p) + 2, ly = Y(p.achieved) + 3, w = 5.6 * label.length;
    if (placed.some((q) => lx < q.x + q.w && q.x < lx + w && Math.abs(ly - q.y) < 11) || lx + w > W - R + 60) continue;
    placed.push({ x: lx, y: ly, w });
    s += `<text x="${lx}" y="${ly}" font-size="10" fill="#333">${esc(label)}</text>`;
    if (placed.length === 6) break;
  }
  let ly = H - B - 150;
  const legend = [["compute", "compute-bound"], ["HBM", "HBM-bound"], ["L2", "L2-bound"], ["latency", "latency-bound"], ["launch", "launch-bound"]];
  for (const [k, label] of legend) { s += `<circle cx="${W - R + 10}" cy="${ly + 60}" r="5" fill="${color[k]}" stroke="#888" stroke-width=".5"/><text x="${W - R + 20}" y="${ly + 64}">${label}</text>`; ly += 16; }
  if (un.length) s += `<circle cx="${W - R + 10}" cy="${ly + 60}" r="5" fill="none" stroke="#777"/><text x="${W - R + 20}" y="${ly + 64}">unfused plan</text>`;
  s += "</svg>";
  box.innerHTML = `<p class="muted">${pts.length} ${esc(report.plan)} nodes${un.length ? ` and ${un.length} unfused (rings)` : ""} placed; area is share of time. Roofs from the GPU database (${esc(report.gpu)}).</p>` + s;
  for (const c of box.querySelectorAll("circle.pt")) if (!c.dataset.plan) c.addEventListener("click", () => showNode(c.dataset.name));
}

// ---- fused vs unfused (compare) ----
async function renderCompare() {
  const box = $("#compare");
  const key = viewKey("cmp", settings());
  if (box.dataset.key === key) return;
  const c = await cached("cmp", "compare");
  if (!c || key !== viewKey("cmp", settings())) return;
  box.dataset.key = key;
  const chg = (a, b) => (a ? `${b - a < 0 ? '<span class="good">' : '<span class="bad">'}${(100 * (b - a) / a).toFixed(1)}%</span>` : "–");
  const u = c.unfused, f = c.fused;
  const rows = [["time", secs(u.time_s), secs(f.time_s), chg(u.time_s, f.time_s)], ["bytes", bytes(u.bytes), bytes(f.bytes), chg(u.bytes, f.bytes)],
    ["launches", count(u.launches), count(f.launches), chg(u.launches, f.launches)], ["FLOPs", flops(u.flops), flops(f.flops), chg(u.flops, f.flops)],
    ["nodes", count(u.nodes), count(f.nodes), chg(u.nodes, f.nodes)]];
  const groups = c.groups.filter((g) => g.saving_s !== 0 || g.constituents.length > 1);
  box.innerHTML = `<table class="grid" style="width:auto"><thead><tr><th class="l">total</th><th>unfused</th><th>fused</th><th>change</th></tr></thead><tbody>${rows.map((r) => `<tr><td class="l">${r[0]}</td><td>${r[1]}</td><td>${r[2]}</td><td>${r[3]}</td></tr>`).join("")}</tbody></table>` +
    `<h4>${groups.length} fused groups, by time saved</h4><div class="scroll"><table class="grid"><thead><tr><th class="l">group</th><th class="l">op</th><th class="l">replaces</th><th>time before → after</th><th>bytes before → after</th><th>launches</th><th>saved</th></tr></thead><tbody>` +
    groups.map((g) => `<tr data-name="${esc(g.name)}"><td class="l name" title="${esc(g.name)}">${esc(g.name)}</td><td class="l">${esc(g.op_type || "(removed)")}</td><td class="l name" title="${esc(g.constituents.join(", "))}">${esc(g.constituents.length > 4 ? g.constituents.slice(0, 3).join(", ") + ` … (+${g.constituents.length - 3})` : g.constituents.join(", "))}</td>` +
      `<td>${secs(g.before.time_s)} → ${secs(g.after.time_s)}</td><td>${bytes(g.before.bytes)} → ${bytes(g.after.bytes)}</td><td>${count(g.before.launches)} → ${count(g.after.launches)}</td><td>${secs(g.saving_s)}</td></tr>`).join("") + "</tbody></table></div>";
  if (state.plan === "fused") for (const tr of box.querySelectorAll("tbody tr[data-name]")) tr.addEventListener("click", () => showNode(tr.dataset.name));
}

// ---- a generation (a decoder's prompt and decode steps) ----
// renderGenerate shows 'onnxcost generate --format json''s figures as
// cards (each card's exact number in data-value) and its text report.
async function renderGenerate() {
  const box = $("#gen-cards");
  const s = genSettings();
  const key = viewKey("gen", s);
  if (box.dataset.key === key) return;
  if (!(key in cache)) cache[key] = call("generate", s);
  const c = cache;
  const v = await c[key];
  if (v === null) { delete c[key]; return; }
  if (key !== viewKey("gen", genSettings()) || state.tab !== "generate") return;
  box.dataset.key = key;
  const r = v.result;
  const iv = (i) => (i && i.length === 2 ? `80% interval ${secs(i[0])} – ${secs(i[1])}` : "");
  const cards = [
    ["ttft_s", "time to first token", secs(r.ttft_s), r.ttft_s, iv(r.ttft_interval_s)],
    ["tpot_s", "time per output token", secs(r.tpot_s), r.tpot_s, iv(r.tpot_interval_s)],
    ["e2e_s", "end to end", secs(r.e2e_s), r.e2e_s, iv(r.e2e_interval_s)],
    ["output_tokens_per_s", "output tokens/s", grouped(r.output_tokens_per_s), r.output_tokens_per_s, `batch ${r.batch} × ${r.output_tokens} tokens`],
    ["kv_cache_bytes", "KV cache", bytes(r.kv_cache_bytes), r.kv_cache_bytes, `${r.prompt_tokens + r.output_tokens} positions`],
    ["peak_memory_bytes", "peak memory", bytes(r.peak_memory_bytes), r.peak_memory_bytes, r.fits ? "fits" : "does not fit"],
    ["max_batch", "largest batch", String(r.max_batch), r.max_batch, "that fits at these lengths"],
  ];
  box.innerHTML = cards.map(([k, label, shown, val, sub]) => `<div class="card" data-gen="${k}" data-value="${val}"><div class="k">${esc(label)}</div><div class="v">${esc(shown)}</div><div class="s">${esc(sub)}</div></div>`).join("");
  // generate's warnings (the CLI's stderr) above its report.
  $("#gen-text").textContent = (r.warnings || []).map((w) => "warning: " + w + "\n").join("") + v.text;
}

// ---- every GPU ----
let gpuSort = { k: "time", asc: true };
async function renderGPUs() {
  const key = viewKey("gpus", settings());
  const rows = await cached("gpus", "gpus");
  if (!rows || key !== viewKey("gpus", settings())) return;
  const cur = rows.find((r) => r.gpu === state.gpu);
  const base = cur && cur.totals ? cur.totals.time_s : 0;
  const batch = state.batch > 0 ? state.batch : 1;
  const cols = [["gpu", "GPU", (r) => r.gpu, "l"], ["arch", "arch", (r) => r.vendor + " " + r.arch, "l"], ["time", "time", (r) => (r.totals ? r.totals.time_s : Infinity)],
    ["tput", state.batch > 0 ? "samples/s" : "runs/s", (r) => (r.totals ? batch / r.totals.time_s : 0)], ["speed", "vs " + state.gpu, (r) => (r.totals && base ? base / r.totals.time_s : 0)],
    ["mem", "peak mem / GPU mem", (r) => (r.totals && gpuByName[r.gpu] ? r.totals.peak_memory_bytes / gpuByName[r.gpu].mem_bytes : 0)], ["energy", "energy", (r) => (r.totals ? r.totals.energy_j : Infinity)]];
  const get = cols.find((c) => c[0] === gpuSort.k)[2];
  const sorted = rows.slice().sort((a, b) => { const x = get(a), y = get(b); const c = x < y ? -1 : x > y ? 1 : a.gpu < b.gpu ? -1 : 1; return gpuSort.asc ? c : -c; });
  $("#gpus-note").textContent = `${model.display}, ${state.plan || "the runtime's"} plan, dtype ${report.dtype}: each row is what 'onnxcost report --gpu ROW' gives. Click a row to switch.`;
  $("#gpus thead").innerHTML = "<tr>" + cols.map(([k, l, , cls]) => `<th data-k="${k}" class="${cls || ""}${k === gpuSort.k ? " sorted" + (gpuSort.asc ? " asc" : "") : ""}">${esc(l)}</th>`).join("") + "</tr>";
  for (const th of $("#gpus thead").querySelectorAll("th")) th.addEventListener("click", () => { gpuSort = { k: th.dataset.k, asc: gpuSort.k === th.dataset.k ? !gpuSort.asc : ["gpu", "arch", "time", "energy"].includes(th.dataset.k) }; renderGPUs(); });
  $("#gpus tbody").innerHTML = sorted.map((r) => {
    if (!r.totals) return `<tr data-gpu="${esc(r.gpu)}"><td class="l">${esc(r.gpu)}</td><td class="l">${esc(r.vendor + " " + r.arch)}</td><td class="l" colspan="5">${esc(r.error)}</td></tr>`;
    const t = r.totals, g = gpuByName[r.gpu] || {};
    const m = g.mem_bytes ? t.peak_memory_bytes / g.mem_bytes : 0;
    return `<tr data-gpu="${esc(r.gpu)}"${r.gpu === state.gpu ? ' class="sel"' : ""}><td class="l">${esc(r.gpu)}</td><td class="l">${esc(r.vendor + " " + r.arch)}</td><td data-time="${t.time_s}">${secs(t.time_s)}</td>` +
      `<td>${grouped(batch / t.time_s)}</td><td>${base ? (base / t.time_s).toFixed(2) + "×" : "–"}</td><td class="${m > 1 ? "bad" : ""}">${m ? pct(m) : "–"}</td><td>${joules(t.energy_j)}</td></tr>`;
  }).join("");
  for (const tr of $("#gpus tbody").querySelectorAll("tr")) tr.addEventListener("click", () => { state.gpu = tr.dataset.gpu; syncControls(); estimate(); });
}

boot().catch((e) => showError("onnxcost: " + (e && e.message ? e.message : e)));
