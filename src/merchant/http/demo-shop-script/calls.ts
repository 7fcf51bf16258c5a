/**
 * The demo shop's script, part 1 of 5 (demo-shop-script.ts joins them): the script's opening, the
 * page's settings, elements with text children only, every call to the kit (listed under Requests),
 * an answer's problem in one line, the customer's token header and the page's messages.
 */
export const CALLS = `(() => {
'use strict';
const SETTINGS = JSON.parse(document.getElementById('demo-settings').textContent);
const LAST_ORDER = 'demo-shop:last-order';
const CHOICES = 'demo-shop:choices';
const FIELDS = ['amount', 'currency', 'card', 'mode', 'method', 'country'];
const $ = (id) => document.getElementById(id);
const CUSTOMER = SETTINGS.customer;
const CARDS_PATH = '/customers/' + encodeURIComponent(CUSTOMER.id) + '/cards';

/** An element with text children only (strings become text nodes, never markup). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** Every call the page makes, listed under Requests: what a shop's front end would send. */
async function api(method, path, body, headers) {
  const init = { method, headers: Object.assign({ accept: 'application/json' }, headers || {}) };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let status = 0;
  let json = null;
  try {
    const res = await fetch(path, init);
    status = res.status;
    json = await res.json().catch(() => null);
  } catch (error) {
    json = { message: 'The kit did not answer: ' + error.message };
  }
  logRequest(method, path, status, json);
  return { status, body: json || {} };
}

function logRequest(method, path, status, json) {
  const log = $('log');
  const note = json && json.code ? ' ' + json.code : '';
  const tone = status >= 200 && status < 300 ? 'ok' : 'err';
  log.prepend(
    el('li', {}, el('code', {}, method + ' ' + path), ' ', el('span', { class: tone }, String(status || 'no answer') + note)),
  );
  while (log.children.length > 20) log.lastElementChild.remove();
}

/** The answer's message and its field errors, in one line. */
function problem(answer) {
  const b = answer.body;
  const fields = Object.entries(b.errors || {}).map(([field, list]) => field + ': ' + [].concat(list).join(', '));
  // The page's customer token lasts an hour: a reload gets a new one.
  const stale = b.code === 'CUSTOMER_TOKEN_INVALID' ? ' Reload the page for a new customer token.' : '';
  return [b.code, b.message].filter(Boolean).join(': ') + (fields.length ? ' (' + fields.join('; ') + ')' : '') + stale;
}

/** The headers of a call about the signed-in customer's cards: their token. */
function asCustomer() {
  return { [SETTINGS.tokenHeader]: CUSTOMER.token };
}

function say(id, text, tone) {
  const node = $(id);
  node.textContent = text;
  node.className = 'message' + (tone ? ' ' + tone : '');
}

`;
