// The console's calls: same origin, the session cookie (HttpOnly, never seen here) and the
// CSRF header the session answer gave. Errors are the API's ErrorInfo text.

const ROOT = location.pathname.replace(/\/+$/, "").replace(/\/console\/console$/, "/console") + "/";
export const SESSION_URL = ROOT + "session";
const API_URL = ROOT + "api/v1/external";

let csrf = null;

export class ApiError extends Error {
  constructor(status, info, reason) {
    super(info);
    this.status = status;
    this.reason = reason;
  }
}

async function failure(response) {
  let info = `The service answered ${response.status}`;
  let reason = "";
  try {
    const body = await response.json();
    if (body && typeof body.info === "string") {
      info = body.info;
      reason = body.reason || "";
    }
  } catch (_) { /* not JSON: keep the status line */ }
  if (response.status === 429) {
    const wait = Number.parseInt(response.headers.get("Retry-After") || "1", 10) || 1;
    info = `Too many requests: try again in ${wait} s`;
  }
  return new ApiError(response.status, info, reason);
}

async function call(method, url, body) {
  const headers = { "Accept": "application/json" };
  if (csrf) headers["X-Console-Csrf"] = csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method,
    headers,
    credentials: "same-origin",
    cache: "no-store",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  return response.json();
}

export async function openSession(code) {
  const session = await call("POST", SESSION_URL, { code });
  csrf = session.csrfToken;
  return session;
}

export async function currentSession() {
  const session = await call("GET", SESSION_URL);
  csrf = session.csrfToken;
  return session;
}

export async function endSession() {
  await call("DELETE", SESSION_URL);
  csrf = null;
}

export function api(method, path, body) {
  return call(method, API_URL + path, body);
}

export function query(parameters) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, value);
  }
  const text = search.toString();
  return text ? "?" + text : "";
}
