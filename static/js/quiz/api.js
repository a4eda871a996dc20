// The quiz page's only module that talks to the server.

async function json(url, options = {}) {
  const response = await fetch(url, { headers: { Accept: 'application/json', ...(options.headers ?? {}) }, ...options });
  if (!response.ok) {
    let detail = `HTTP ${response.status}`;
    try { detail = (await response.json()).detail ?? detail; } catch { /* not JSON */ }
    throw new Error(typeof detail === 'string' ? detail : JSON.stringify(detail));
  }
  return response.json();
}

export function kinds() {
  return json('/api/questions/kinds');
}

/** A practice set ({seed, count, kinds}) or, with `one`, a single question. */
export async function load({ seed, count, kinds: chosen, one }) {
  if (one) return { seed, count: 1, questions: [await json(`/api/questions/${encodeURIComponent(one)}/${seed}`)] };
  return json(`/api/questions/set?${setQuery({ seed, count, kinds: chosen })}`);
}

export function setQuery({ seed, count, kinds: chosen }) {
  const params = new URLSearchParams({ seed: String(seed), count: String(count) });
  for (const k of chosen ?? []) params.append('kind', k);
  return params.toString();
}

export function check(question, answers, orderMode) {
  return json(`/api/questions/${question.kind}/${question.seed}/answer`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ answers, order_mode: orderMode }),
  });
}

export function reveal(question) {
  return json(`/api/questions/${question.kind}/${question.seed}/answer`);
}
