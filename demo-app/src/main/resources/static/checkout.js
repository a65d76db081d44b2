'use strict';

// The checkout page: plain fetch() calls against the demo's API. Every attempt is logged.

const $ = (id) => document.getElementById(id);
let order = null;
let attempts = 0;

function newKey() {
	if (window.crypto && crypto.randomUUID) {
		return crypto.randomUUID();
	}
	return 'k-' + Date.now().toString(16) + '-' + Math.random().toString(16).slice(2);
}

function log(request, key, response, body, note, lost) {
	attempts++;
	const row = document.createElement('tr');
	row.className = lost ? 'lost' : '';
	row.dataset.status = response ? String(response.status) : 'error';
	row.dataset.replayed = (response && response.headers.get('Idempotent-Replayed')) || '';
	row.dataset.key = key || '';
	const result = body ? (body.paymentId || body.status || body.title || '') : '';
	const cells = [attempts, request, key || '-', response ? response.status : 'network error',
		row.dataset.replayed || '-', result, note || ''];
	cells.forEach((text, i) => {
		const cell = document.createElement('td');
		cell.textContent = text;
		if (i === 4 && row.dataset.replayed === 'true') {
			cell.className = 'replayed';
		}
		row.appendChild(cell);
	});
	$('log').appendChild(row);
}

async function call(method, path, body, key) {
	const headers = { 'Content-Type': 'application/json' };
	if (key) {
		headers['Idempotency-Key'] = key;
	}
	const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
	const text = await response.text();
	return { response, body: text ? JSON.parse(text) : null };
}

async function refreshBalance() {
	const { response, body } = await call('GET', '/api/accounts/' + $('account-id').value);
	$('balance').textContent = response.ok ? body.balance : body.title;
}

/**
 * Every payment of the account next to the shipments made for it: one each, however
 * often its event was delivered.
 */
async function refreshShipments() {
	const account = $('account-id').value;
	const ledger = await call('GET', '/api/accounts/' + account + '/ledger');
	const shipments = await call('GET', '/api/accounts/' + account + '/shipments');
	const deliveries = await call('GET', '/api/shipping/deliveries');
	if (!ledger.response.ok || !shipments.response.ok) {
		return;
	}
	$('deliveries').textContent = deliveries.body.deliveries;
	const rows = ledger.body.filter((entry) => entry.kind === 'PAYMENT').map((entry) => {
		const shipped = shipments.body.filter((shipment) => shipment.paymentId === entry.id);
		const row = document.createElement('tr');
		row.dataset.payment = entry.id;
		row.dataset.shipments = String(shipped.length);
		[entry.id, entry.orderNo, -entry.amount, shipped.map((shipment) => shipment.shipmentId).join(', ') || 'none']
			.forEach((text) => {
				const cell = document.createElement('td');
				cell.textContent = text;
				row.appendChild(cell);
			});
		return row;
	});
	$('shipments').replaceChildren(...rows);
}

async function refreshOrder() {
	if (!order) {
		return;
	}
	const { body } = await call('GET', '/api/orders/' + encodeURIComponent(order.orderNo));
	order = body;
	showOrder();
}

function showOrder() {
	$('order-no').textContent = order.orderNo;
	$('order-status').textContent = order.status;
	$('pay').disabled = false;
	$('pay-new-key').disabled = false;
	$('refund').disabled = false;
}

async function newOrder() {
	const orderNo = 'web-' + newKey().slice(0, 8);
	const payload = { orderNo, accountId: Number($('account-id').value), amount: Number($('amount').value) };
	const { response, body } = await call('POST', '/api/orders', payload);
	log('POST /api/orders', null, response, body, response.ok ? 'order ' + orderNo : body.detail);
	if (response.ok) {
		order = body;
		showOrder();
	}
}

/**
 * Sends one logical operation with one key until it gets an answer it keeps: the first
 * answer is dropped when "lose the response" is on, a 409 or 503 is retried after its
 * Retry-After, at most 5 attempts.
 */
async function sendWithKey(label, path, payload, key, loseFirst) {
	let lose = loseFirst;
	for (let attempt = 1; attempt <= 5; attempt++) {
		let result;
		try {
			result = await call('POST', path, payload, key);
		}
		catch (e) {
			log(label, key, null, null, 'network error, retrying with the same key', false);
			continue;
		}
		const { response, body } = result;
		if (lose) {
			lose = false;
			log(label, key, response, body, 'response dropped by the page (as if lost), retrying with the same key',
				true);
			continue;
		}
		if (response.status === 409 && response.headers.get('Retry-After') || response.status === 503) {
			const seconds = Number(response.headers.get('Retry-After') || '1');
			log(label, key, response, body, 'in progress, retrying in ' + seconds + ' s', false);
			await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
			continue;
		}
		log(label, key, response, body, response.ok ? 'kept' : (body && body.detail) || 'failed', false);
		return { response, body };
	}
	return null;
}

async function pay(withNewKeyOnly) {
	$('pay').disabled = true;
	try {
		const key = newKey();
		const lose = !withNewKeyOnly && $('lose').checked;
		const path = '/api/payments' + ($('deliver-twice').checked ? '?deliverEventTwice=true' : '');
		await sendWithKey('POST /api/payments', path, { orderNo: order.orderNo }, key, lose);
		await refreshOrder();
		await refreshBalance();
		// The shipment follows the payment: its event is consumed asynchronously.
		await refreshShipments();
		[300, 1000, 3000].forEach((delay) => setTimeout(refreshShipments, delay));
	}
	finally {
		$('pay').disabled = false;
	}
}

async function refund() {
	await sendWithKey('POST /api/orders/' + order.orderNo + '/refund',
		'/api/orders/' + encodeURIComponent(order.orderNo) + '/refund', null, newKey(), $('lose').checked);
	await refreshOrder();
	await refreshBalance();
}

$('refresh').addEventListener('click', () => { refreshBalance(); refreshShipments(); });
$('account-id').addEventListener('change', () => { refreshBalance(); refreshShipments(); });
$('new-order').addEventListener('click', newOrder);
$('pay').addEventListener('click', () => pay(false));
$('pay-new-key').addEventListener('click', () => pay(true));
$('refund').addEventListener('click', refund);
refreshBalance();
refreshShipments();
