// The administrators' console: hash-routed pages over the tenant admin API.
// Everything is built with DOM calls (textContent, never innerHTML): no data becomes markup.

import { api, ApiError, currentSession, endSession, openSession, query } from "./api.js";
import { connectorCharts } from "./charts.js";

const main = document.getElementById("main");
const EVENT_TYPES = ["incident.accepted", "incident.rejected", "incident.updated", "connector.test"];
const PROFILES = ["baseline", "standard-webhooks", "raw-body-no-timestamp"];
const STATUSES = ["PENDING", "HELD", "DELIVERED", "FAILED", "STOPPED", "EXPIRED", "CANCELLED"];
const DEAD = ["FAILED", "STOPPED", "EXPIRED", "CANCELLED"];
const PERMISSIONS = ["VIEW_KNOWLEDGE", "MANAGE_KNOWLEDGE", "MANAGE_PHASES", "MANAGE_USERS",
  "BROWSE_EVENTS", "MANAGE_EVENTS", "VIEW_QA", "ADMIN", "RESOURCE_CENTER_PUBLISH"];
let session = null;
let fieldCounter = 0;

// ---------------------------------------------------------------- building blocks

function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

function field(label, control, hint) {
  const id = control.id || `field-${++fieldCounter}`;
  control.id = id;
  const hintNode = hint ? h("span", { class: "muted", id: `${id}-hint` }, hint) : null;
  if (hintNode) control.setAttribute("aria-describedby", hintNode.id);
  const inline = control.type === "checkbox";
  return h("div", { class: inline ? "field inline" : "field" },
    inline ? [control, h("label", { for: id }, label)] : [h("label", { for: id }, label), control],
    hintNode);
}

function input(name, attributes = {}) {
  return h("input", { name, type: "text", ...attributes });
}

function select(name, options, chosen) {
  return h("select", { name }, options.map(([value, text]) =>
    h("option", { value, selected: value === chosen }, text)));
}

function statusText(status) {
  return h("span", { class: `status-${status}` }, status);
}

function when(text) {
  return text ? new Date(text).toLocaleString() : "—";
}

function isoFromLocal(value) {
  return value ? new Date(value).toISOString() : undefined;
}

function localInputValue(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function table(caption, headings, rows) {
  return h("div", { class: "scroll" }, h("table", {},
    h("caption", { class: "muted" }, caption),
    h("thead", {}, h("tr", {}, headings.map((text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: headings.length }, "None")))));
}

function notify(text) {
  const notice = document.getElementById("notice");
  notice.textContent = text;
  notice.hidden = !text;
}

function complain(error) {
  const problem = document.getElementById("problem");
  const text = error ? (error instanceof Error ? error.message : String(error)) : "";
  problem.textContent = text;
  problem.hidden = !text;
  if (error instanceof ApiError && error.status === 401) showSignedOut();
}

function clearMessages() {
  notify("");
  complain(null);
}

// A form's submit: its button disabled while the call runs, errors in the alert region.
function onSubmit(handler) {
  return async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const buttons = form.querySelectorAll("button");
    buttons.forEach((button) => { button.disabled = true; });
    clearMessages();
    try {
      await handler(new FormData(form), form);
    } catch (error) {
      complain(error);
    } finally {
      buttons.forEach((button) => { button.disabled = false; });
    }
  };
}

// A secret shown once, with a copy button; it is not kept anywhere after the page changes.
function secretBox(title, secret, note) {
  const code = h("p", { class: "secret", "data-secret": "shown" }, secret);
  const copied = h("span", { role: "status", class: "muted" });
  return h("section", { class: "panel", "aria-label": title },
    h("h2", {}, title),
    h("p", {}, note),
    code,
    h("button", {
      type: "button",
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(secret);
          copied.textContent = "Copied.";
        } catch (_) {
          copied.textContent = "Copy failed: select the text and copy it.";
        }
      },
    }, "Copy"), " ", copied);
}

function page(title, ...children) {
  main.replaceChildren(h("h1", {}, title), ...children.filter((child) => child));
  document.title = `${title} · PSAP admin console`;
}

function markSection(section) {
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.section === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

// ---------------------------------------------------------------- connectors

async function connectorsPage() {
  markSection("connectors");
  const { items } = await api("GET", "/admin/connectors");
  const rows = await Promise.all(items.map(async (connector) => {
    const recent = await api("GET",
      `/admin/connectors/${encodeURIComponent(connector.connectorId)}/deliveries?limit=20`);
    const counts = {};
    for (const delivery of recent.items) counts[delivery.status] = (counts[delivery.status] || 0) + 1;
    const health = recent.items.length
      ? Object.entries(counts).map(([status, count]) => `${count} ${status.toLowerCase()}`).join(", ") +
        ` (last ${recent.items.length})`
      : "no deliveries yet";
    return h("tr", {},
      h("td", {}, h("a", { href: `#/connectors/${connector.connectorId}` }, connector.name)),
      h("td", {}, connector.url),
      h("td", {}, connector.profile),
      h("td", {}, statusText(connector.status)),
      h("td", {}, health));
  }));
  page("Connectors",
    table("The tenant's CAD connectors", ["Name", "URL", "Profile", "Status", "Recent deliveries"], rows),
    createConnectorForm());
}

function eventTypeBoxes(chosen) {
  return h("fieldset", {}, h("legend", {}, "Event types (none ticked: every kind)"),
    EVENT_TYPES.map((type) => field(type, input("eventTypes", {
      type: "checkbox", value: type, checked: chosen ? chosen.includes(type) : false,
    }))));
}

function chosenEventTypes(data) {
  const chosen = data.getAll("eventTypes");
  return chosen.length ? chosen : null;
}

function createConnectorForm() {
  const result = h("div");
  const form = h("form", { "aria-labelledby": "create-connector" },
    h("h2", { id: "create-connector" }, "Create a connector"),
    field("Name", input("name", { required: true, maxlength: 200, autocomplete: "off" })),
    field("URL", input("url", { type: "url", required: true, maxlength: 2048 }),
      "https on port 443 or 8443; a local-dev connector may use loopback"),
    field("Signing profile", select("profile", PROFILES.map((p) => [p, p]), "baseline")),
    eventTypeBoxes(null),
    field("Bearer credential the CAD gave us", input("bearerCredential", {
      type: "password", autocomplete: "off", maxlength: 4096,
    }), "Write-only: kept in Secrets Manager, never shown again"),
    field("Local development (loopback receiver)", input("localDev", { type: "checkbox" })),
    h("button", { type: "submit" }, "Create connector"));
  form.addEventListener("submit", onSubmit(async (data, element) => {
    const body = {
      name: data.get("name"),
      url: data.get("url"),
      profile: data.get("profile"),
      eventTypes: chosenEventTypes(data),
      localDev: data.get("localDev") === "on",
    };
    if (data.get("bearerCredential")) body.bearerCredential = data.get("bearerCredential");
    const created = await api("POST", "/admin/connectors", body);
    element.reset();
    notify(`Connector ${created.connector.name} created.`);
    result.replaceChildren(
      secretBox("Signing secret", created.signingSecret,
        "Give it to the CAD now: it is shown this once. Its receiver verifies every update with it."),
      h("p", {}, h("a", { href: `#/connectors/${created.connector.connectorId}` },
        `Open ${created.connector.name}`)));
    result.querySelector("button").focus();
  }));
  return h("div", {}, form, result);
}

async function connectorPage(connectorId) {
  markSection("connectors");
  const connector = await api("GET", `/admin/connectors/${encodeURIComponent(connectorId)}`);
  const base = `/admin/connectors/${encodeURIComponent(connectorId)}`;
  const result = h("div", { id: "connector-result" });
  const enabled = connector.status === "ACTIVE";

  const actions = h("div", { class: "row panel" },
    h("button", {
      type: "button", id: "send-test",
      onclick: () => act(async () => {
        const sent = await api("POST", `${base}/test`);
        notify(`Test delivery ${sent.deliveryId} queued.`);
        result.replaceChildren(h("p", {}, h("a", { href: `#/delivery/${sent.deliveryId}` },
          `Follow test delivery ${sent.deliveryId}`)));
      }),
    }, "Send a test delivery"),
    h("button", {
      type: "button", class: "secondary", id: "toggle-connector",
      onclick: () => act(async () => {
        await api("POST", `${base}/${enabled ? "disable" : "enable"}`);
        notify(`Connector ${enabled ? "disabled: updates are held" : "enabled"}.`);
        await connectorPage(connectorId);
      }),
    }, enabled ? "Disable" : "Enable"),
    h("a", { href: `#/deliveries?connector=${encodeURIComponent(connectorId)}` }, "Delivery log"),
    h("a", { href: `#/connectors/${encodeURIComponent(connectorId)}/charts`, id: "connector-charts" },
      "Charts"));

  const edit = h("form", { "aria-labelledby": "edit-connector" },
    h("h2", { id: "edit-connector" }, "Edit"),
    field("Name", input("name", { value: connector.name, required: true, maxlength: 200 })),
    field("URL", input("url", { type: "url", value: connector.url, required: true })),
    eventTypeBoxes(connector.eventTypes),
    field("New bearer credential (needed when the URL moves to another server)",
      input("bearerCredential", { type: "password", autocomplete: "off" })),
    h("button", { type: "submit" }, "Save changes"));
  edit.addEventListener("submit", onSubmit(async (data) => {
    const body = { name: data.get("name"), url: data.get("url"), eventTypes: chosenEventTypes(data) };
    if (data.get("bearerCredential")) body.bearerCredential = data.get("bearerCredential");
    await api("PATCH", base, body);
    await connectorPage(connectorId);
    notify("Connector saved.");
  }));

  const rotate = h("form", { "aria-labelledby": "rotate-secret" },
    h("h2", { id: "rotate-secret" }, "Rotate the signing secret"),
    field("Hours the previous secret stays valid", input("overlapHours", {
      type: "number", min: 0, max: 720, value: 24, required: true,
    })),
    h("button", { type: "submit", class: "secondary" }, "Rotate secret"));
  rotate.addEventListener("submit", onSubmit(async (data) => {
    const rotated = await api("POST", `${base}/rotate-secret`,
      { overlapHours: Number(data.get("overlapHours")) });
    result.replaceChildren(secretBox("New signing secret", rotated.signingSecret,
      `Shown this once. The previous secret stays valid until ${when(rotated.previousSecretsRetireAt)}.`));
    notify("Signing secret rotated.");
    result.querySelector("button").focus();
  }));

  page(connector.name,
    h("dl", { class: "facts" },
      h("dt", {}, "Status"), h("dd", {}, statusText(connector.status),
        connector.flagReason ? ` (${connector.flagReason})` : ""),
      h("dt", {}, "URL"), h("dd", {}, connector.url),
      h("dt", {}, "Profile"), h("dd", {}, connector.profile),
      h("dt", {}, "Event types"), h("dd", {}, connector.eventTypes ? connector.eventTypes.join(", ") : "every kind"),
      h("dt", {}, "Id"), h("dd", {}, connector.connectorId)),
    actions, result, edit, rotate);
}

async function chartsPage(connectorId, parameters) {
  markSection("connectors");
  const span = parameters.get("window") === "7d" ? "7d" : "24h";
  const base = `/admin/connectors/${encodeURIComponent(connectorId)}`;
  const stats = await api("GET", `${base}/stats${query({ window: span })}`);
  const link = (value, text) => h("a", {
    href: `#/connectors/${encodeURIComponent(connectorId)}/charts?window=${value}`,
    "aria-current": value === span ? "page" : undefined,
  }, text);
  page(`Charts of ${connectorId}`,
    h("p", { class: "row" }, link("24h", "Last 24 hours"), link("7d", "Last 7 days"),
      h("a", { href: `#/connectors/${encodeURIComponent(connectorId)}` }, "Back to the connector")),
    connectorCharts(stats));
}

async function act(work) {
  clearMessages();
  try {
    await work();
  } catch (error) {
    complain(error);
  }
}

// ---------------------------------------------------------------- deliveries

async function deliveriesPage(parameters) {
  markSection("deliveries");
  const { items: connectors } = await api("GET", "/admin/connectors");
  const connectorId = parameters.get("connector") || (connectors[0] && connectors[0].connectorId) || "";
  const filters = h("form", { "aria-labelledby": "delivery-filters" },
    h("h2", { id: "delivery-filters" }, "Filters"),
    h("div", { class: "row" },
      field("Connector", select("connector", connectors.map((c) => [c.connectorId, c.name]), connectorId)),
      field("Status", select("status", [["", "Any"], ...STATUSES.map((s) => [s, s])],
        parameters.get("status") || "")),
      field("Event type", select("eventType", [["", "Any"], ...EVENT_TYPES.map((t) => [t, t])],
        parameters.get("eventType") || "")),
      field("Created since", input("since", { type: "datetime-local", value: parameters.get("since") || "" })),
      h("button", { type: "submit" }, "Show")));
  filters.addEventListener("submit", onSubmit(async (data) => {
    const wanted = "#/deliveries" + query({
      connector: data.get("connector"), status: data.get("status"),
      eventType: data.get("eventType"), since: data.get("since"),
    });
    // The same filters again: no hashchange, so read the log again here.
    if (location.hash === wanted) await route();
    else location.hash = wanted;
  }));
  if (!connectorId) {
    page("Deliveries", h("p", {}, "No connector yet: create one first."));
    return;
  }
  const log = await api("GET", `/admin/connectors/${encodeURIComponent(connectorId)}/deliveries` + query({
    status: parameters.get("status"), eventType: parameters.get("eventType"),
    since: isoFromLocal(parameters.get("since")), cursor: parameters.get("cursor"), limit: 25,
  }));
  const rows = log.items.map((delivery) => h("tr", {},
    h("td", {}, h("a", { href: `#/delivery/${delivery.deliveryId}` }, when(delivery.createdAt))),
    h("td", {}, delivery.eventType),
    h("td", {}, statusText(delivery.status)),
    h("td", {}, String(delivery.attemptCount)),
    h("td", {}, delivery.lastStatusCode === null ? (delivery.lastErrorClass || "—") : String(delivery.lastStatusCode))));
  const next = log.nextCursor
    ? h("p", {}, h("a", { href: "#/deliveries" + query({
      connector: connectorId, status: parameters.get("status"), eventType: parameters.get("eventType"),
      since: parameters.get("since"), cursor: log.nextCursor,
    }) }, "Next page"))
    : null;
  page("Deliveries", filters,
    table("Newest first", ["Created", "Event type", "Status", "Attempts", "Last answer"], rows),
    next, recoverForm(connectorId));
}

// How many dead-letter deliveries a recovery would re-send (a few pages per state).
async function countDead(connectorId, since) {
  let total = 0;
  let capped = false;
  for (const status of DEAD) {
    let cursor;
    for (let pageNumber = 0; pageNumber < 5; pageNumber += 1) {
      const log = await api("GET", `/admin/connectors/${encodeURIComponent(connectorId)}/deliveries` +
        query({ status, since, cursor, limit: 100 }));
      total += log.items.length;
      cursor = log.nextCursor;
      if (!cursor) break;
      if (pageNumber === 4) capped = true;
    }
  }
  return { total, capped };
}

function recoverForm(connectorId) {
  const confirmation = h("div");
  const form = h("form", { "aria-labelledby": "recover" },
    h("h2", { id: "recover" }, "Recover failed deliveries"),
    field("Failed since", input("since", {
      type: "datetime-local", required: true, value: localInputValue(new Date(Date.now() - 24 * 3600e3)),
    })),
    h("button", { type: "submit", class: "secondary" }, "Recover…"), confirmation);
  form.addEventListener("submit", onSubmit(async (data) => {
    const since = isoFromLocal(data.get("since"));
    const { total, capped } = await countDead(connectorId, since);
    const yes = h("button", {
      type: "button", id: "confirm-recover",
      onclick: () => act(async () => {
        // The API starts a job and answers at once; the connector shows its progress.
        const base = `/admin/connectors/${encodeURIComponent(connectorId)}`;
        let job = await api("POST", `${base}/deliveries/recover`, { since });
        notify("Recovery started.");
        for (let waited = 0; job.state === "RUNNING" && waited < 120; waited += 1) {
          await new Promise((resolve) => setTimeout(resolve, 1000));
          job = (await api("GET", base)).deliveryJob || job;
        }
        confirmation.replaceChildren();
        notify(job.state === "RUNNING"
          ? `${job.released} deliveries queued again so far; the recovery goes on.`
          : `${job.released} deliveries queued again.`);
      }),
    }, `Recover ${total}${capped ? "+" : ""}`);
    confirmation.replaceChildren(h("div", { class: "panel", role: "group", "aria-label": "Confirm recovery" },
      h("p", {}, `${total}${capped ? " or more" : ""} failed, stopped or expired deliveries since ` +
        `${when(since)} will be sent again, with the same ids and bodies.`),
      yes, " ", h("button", { type: "button", class: "secondary",
        onclick: () => confirmation.replaceChildren() }, "Cancel")));
    yes.focus();
  }));
  return form;
}

async function deliveryPage(deliveryId) {
  markSection("deliveries");
  const delivery = await api("GET", `/admin/deliveries/${encodeURIComponent(deliveryId)}`);
  const attempts = delivery.attempts.map((attempt) => h("tr", {},
    h("td", {}, String(attempt.number)),
    h("td", {}, when(attempt.startedAt)),
    h("td", {}, attempt.statusCode === null ? "—" : String(attempt.statusCode)),
    h("td", {}, `${attempt.latencyMs} ms`),
    h("td", {}, [attempt.errorClass, attempt.errorDetail].filter(Boolean).join(": ") || "—"),
    h("td", {}, h("code", {}, attempt.responseExcerpt || "")),
    h("td", { class: "signature" }, Object.entries(attempt.signatureHeaders || {}).map(
      ([name, value]) => h("div", {}, h("code", {}, `${name}: ${value}`))))));
  page(`Delivery ${delivery.deliveryId}`,
    h("dl", { class: "facts" },
      h("dt", {}, "Status"), h("dd", { id: "delivery-status" }, statusText(delivery.status)),
      h("dt", {}, "Event type"), h("dd", {}, delivery.eventType),
      h("dt", {}, "Connector"), h("dd", {}, h("a", { href: `#/connectors/${delivery.connectorId}` }, delivery.connectorId)),
      h("dt", {}, "Created"), h("dd", {}, when(delivery.createdAt)),
      h("dt", {}, "Next attempt"), h("dd", {}, when(delivery.nextAttemptAt)),
      h("dt", {}, "Delivered"), h("dd", {}, when(delivery.deliveredAt))),
    h("div", { class: "row panel" },
      h("button", { type: "button", id: "refresh-delivery", class: "secondary",
        onclick: () => act(() => deliveryPage(deliveryId)) }, "Refresh"),
      h("button", { type: "button", id: "replay-delivery",
        onclick: () => act(async () => {
          await api("POST", `/admin/deliveries/${encodeURIComponent(deliveryId)}/replay`);
          await deliveryPage(deliveryId);
          notify("Delivery queued again.");
        }) }, "Replay")),
    h("h2", {}, "Attempts"),
    table("Newest first", ["#", "Started", "Answer", "Latency", "Error", "Receiver's answer (excerpt)", "Signature headers sent"], attempts),
    h("h2", {}, "Body sent"), h("pre", {}, delivery.body));
}

// ---------------------------------------------------------------- credentials

async function credentialsPage() {
  markSection("credentials");
  const listing = await api("GET", "/admin/credentials?limit=100");
  const result = h("div");
  const rows = listing.items.map((credential) => h("tr", {},
    h("td", {}, credential.credentialId),
    h("td", {}, credential.label),
    h("td", {}, credential.kind),
    h("td", {}, credential.permissions.join(", ") || "—"),
    h("td", {}, when(credential.expiresAt)),
    h("td", {}, credential.revoked ? "revoked" : "in force"),
    h("td", {}, credential.revoked ? "" : h("button", {
      type: "button", class: "danger", "aria-label": `Revoke ${credential.label}`,
      "data-revoke": credential.credentialId,
      onclick: () => confirmRevoke(credential, result),
    }, "Revoke…"))));
  page("Credentials",
    h("p", { class: "muted" }, "Tokens are never shown here: only when issued."),
    table("The tenant's credentials", ["Id", "Label", "Kind", "Permissions", "Expires", "State", ""], rows),
    result, issueForm(result));
}

function confirmRevoke(credential, result) {
  clearMessages();
  const yes = h("button", { type: "button", class: "danger", id: "confirm-revoke",
    onclick: () => act(async () => {
      const answer = await api("POST",
        `/admin/credentials/${encodeURIComponent(credential.credentialId)}/revoke`);
      await credentialsPage();
      const cascaded = answer.alsoRevoked.map((c) => `${c.label} (${c.credentialId})`);
      notify(`Revoked ${credential.label}` +
        (cascaded.length ? `, and what it issued: ${cascaded.join(", ")}.` : "; it had issued nothing."));
    }) }, `Revoke ${credential.label}`);
  result.replaceChildren(h("div", { class: "panel", role: "group", "aria-label": "Confirm revocation" },
    h("p", {}, `Revoking ${credential.label} also revokes every credential it issued, and theirs. ` +
      "The data interface may accept it for up to a minute more; this console refuses it at once."),
    yes, " ", h("button", { type: "button", class: "secondary",
      onclick: () => result.replaceChildren() }, "Cancel")));
  yes.focus();
}

function issueForm(result) {
  const form = h("form", { "aria-labelledby": "issue-credential" },
    h("h2", { id: "issue-credential" }, "Issue a credential"),
    field("Kind", select("kind", [["partner", "partner (data interface)"], ["cad", "cad (CAD intake key)"]], "partner")),
    field("Label", input("label", { required: true, maxlength: 200 })),
    h("fieldset", {}, h("legend", {}, "Permissions (partner only; at most your own)"),
      PERMISSIONS.map((permission) => field(permission, input("permissions", { type: "checkbox", value: permission })))),
    field("Expires in days", input("expiresInDays", { type: "number", min: 1, max: 365, value: 90, required: true })),
    h("button", { type: "submit" }, "Issue credential"));
  form.addEventListener("submit", onSubmit(async (data, element) => {
    const kind = data.get("kind");
    const issued = await api("POST", "/admin/credentials", {
      kind, label: data.get("label"), expiresInDays: Number(data.get("expiresInDays")),
      permissions: kind === "cad" ? [] : data.getAll("permissions"),
    });
    element.reset();
    await credentialsPage();
    notify(`Credential ${issued.credential.label} issued.`);
    const box = secretBox("Token", issued.token, "Shown this once: store it now. Only its hash is kept.");
    main.querySelector("h1").after(box);
    box.querySelector("button").focus();
  }));
  return form;
}

// ---------------------------------------------------------------- audit

function auditPage() {
  markSection("audit");
  const progress = h("div", { "aria-live": "polite" });
  const now = new Date();
  const form = h("form", { "aria-labelledby": "export-audit" },
    h("h2", { id: "export-audit" }, "Export the audit log"),
    h("div", { class: "row" },
      field("From", input("from", { type: "datetime-local", required: true,
        value: localInputValue(new Date(now.getTime() - 24 * 3600e3)) })),
      field("To", input("to", { type: "datetime-local", required: true,
        value: localInputValue(new Date(now.getTime() + 60e3)) })),
      field("Format", select("format", [["ndjson", "NDJSON"], ["csv", "CSV"]], "ndjson")),
      h("button", { type: "submit" }, "Create export")));
  form.addEventListener("submit", onSubmit(async (data) => {
    let state = await api("POST", "/audit-log/exports", {
      from: isoFromLocal(data.get("from")), to: isoFromLocal(data.get("to")), format: data.get("format"),
    });
    const show = () => progress.replaceChildren(h("p", { id: "export-state" },
      `Export ${state.exportId}: `, statusText(state.status),
      state.recordCount === null || state.recordCount === undefined ? "" : `, ${state.recordCount} records`));
    show();
    for (let polls = 0; polls < 120 && !["SUCCEEDED", "FAILED"].includes(state.status); polls += 1) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      state = await api("GET", `/audit-log/exports/${encodeURIComponent(state.exportId)}`);
      show();
    }
    if (state.status === "SUCCEEDED" && state.downloadUrl) {
      progress.append(h("p", {}, h("a", { href: state.downloadUrl, id: "export-download", download: "" },
        `Download the export (${state.sizeBytes} bytes)`)));
    } else if (state.failure) {
      complain(state.failure);
    }
  }));
  page("Audit log", h("p", { class: "muted" },
    "Every console action is recorded as your Admin credential, marked (console)."), form, progress);
}

// ---------------------------------------------------------------- session and routing

function showSignedOut(text) {
  session = null;
  document.getElementById("nav").hidden = true;
  document.getElementById("who").replaceChildren();
  page("Signed out", h("p", {}, text ||
    "Your console session has ended. Ask for a new sign-in link: " +
    "POST /api/v1/external/admin/console-links with an Admin credential, " +
    "or psap-admin console link --tenant ID."));
}

function showSession() {
  document.getElementById("nav").hidden = false;
  document.getElementById("who").replaceChildren(
    h("span", {}, `Tenant ${session.tenantId} · ${session.label}`),
    h("button", { type: "button", class: "link", onclick: async () => {
      await act(endSession);
      showSignedOut("You are signed out.");
    } }, "Sign out"));
}

// One page at a time, in the order asked: a slow page never lands over a later one.
let routing = Promise.resolve();

function route() {
  routing = routing.then(showRoute, showRoute);
  return routing;
}

async function showRoute() {
  if (!session) return;
  clearMessages();
  const [path, search] = location.hash.replace(/^#/, "").split("?");
  const parameters = new URLSearchParams(search || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === "connectors" && parts[1] && parts[2] === "charts") await chartsPage(parts[1], parameters);
    else if (parts[0] === "connectors" && parts[1]) await connectorPage(parts[1]);
    else if (parts[0] === "deliveries") await deliveriesPage(parameters);
    else if (parts[0] === "delivery" && parts[1]) await deliveryPage(parts[1]);
    else if (parts[0] === "credentials") await credentialsPage();
    else if (parts[0] === "audit") auditPage();
    else await connectorsPage();
    main.focus();
  } catch (error) {
    complain(error);
  }
}

async function start() {
  try {
    const code = new URLSearchParams(location.hash.replace(/^#/, "")).get("code");
    if (code) {
      // The code leaves the address bar (and the history entry) before it is spent.
      history.replaceState(null, "", location.pathname + "#/connectors");
      session = await openSession(code);
    } else {
      session = await currentSession();
    }
  } catch (error) {
    showSignedOut(error instanceof ApiError && error.status !== 401 ? error.message : undefined);
    if (error instanceof ApiError && error.status === 401 && error.message !== "Authentication required") {
      complain(error.message);
    }
    return;
  }
  showSession();
  window.addEventListener("hashchange", route);
  await route();
}

start();
