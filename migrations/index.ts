import * as orders from './2026-11-23-01-orders.js';
import * as inbox from './2026-11-23-02-webhook-inbox.js';
import * as attemptTransactionIndex from './2026-11-23-03-attempt-transaction-index.js';
import * as pollingAndRecovery from './2026-11-23-04-polling-and-recovery.js';
import * as gatewayView from './2026-11-24-05-gateway-view.js';
import * as inboxReceipts from './2026-11-24-06-inbox-receipts.js';
import * as captureBefore from './2026-11-24-07-capture-before.js';
import * as unmatchedMoney from './2026-11-24-08-unmatched-money.js';
import * as moneyAt from './2026-11-24-09-money-at.js';
import * as disputes from './2026-11-24-10-disputes.js';
import * as orderEvents from './2026-11-24-11-order-events.js';
import * as operators from './2026-11-24-12-operators.js';
import * as savedCards from './2026-11-24-13-saved-cards.js';
import * as attemptActionUrl from './2026-11-25-14-attempt-action-url.js';
import * as attemptSavedCard from './2026-11-27-15-attempt-saved-card.js';
import * as operationKeyDigests from './2026-11-27-16-operation-key-digests.js';
import * as inboxVaultTokens from './2026-11-28-17-inbox-vault-tokens.js';
import * as orderClientSecret from './2026-11-28-18-order-client-secret.js';
import * as savedCardSyncs from './2026-11-28-19-saved-card-syncs.js';
import * as reviewResolutions from './2026-11-29-20-review-resolutions.js';
import * as inboxRetention from './2026-11-30-21-inbox-retention.js';
import * as orderCustomerIndex from './2026-11-30-22-order-customer-index.js';
import * as orderRequests from './2026-11-30-23-order-requests.js';
import * as orderClosure from './2026-11-30-24-order-closure.js';
import * as paymentLinks from './2026-12-01-25-payment-links.js';
import * as unmatchedPayment from './2026-12-02-26-unmatched-payment.js';
import * as disputeKeys from './2026-12-02-27-dispute-keys.js';
import * as inboxMaskedFields from './2026-12-02-28-inbox-masked-fields.js';
import * as orderMerchant from './2026-12-03-29-order-merchant.js';
import * as orderEventMerchant from './2026-12-03-30-order-event-merchant.js';
import * as merchantScopes from './2026-12-03-31-merchant-scopes.js';
import * as merchantKeys from './2026-12-03-32-merchant-keys.js';
import * as webhookMerchant from './2026-12-03-33-webhook-merchant.js';
import * as unmatchedMerchant from './2026-12-03-34-unmatched-merchant.js';

/** Every migration, in order. A static list: it runs the same under tsx and compiled. */
export const MIGRATIONS = [
  { name: '2026-11-23-01-orders', ...orders },
  { name: '2026-11-23-02-webhook-inbox', ...inbox },
  { name: '2026-11-23-03-attempt-transaction-index', ...attemptTransactionIndex },
  { name: '2026-11-23-04-polling-and-recovery', ...pollingAndRecovery },
  { name: '2026-11-24-05-gateway-view', ...gatewayView },
  { name: '2026-11-24-06-inbox-receipts', ...inboxReceipts },
  { name: '2026-11-24-07-capture-before', ...captureBefore },
  { name: '2026-11-24-08-unmatched-money', ...unmatchedMoney },
  { name: '2026-11-24-09-money-at', ...moneyAt },
  { name: '2026-11-24-10-disputes', ...disputes },
  { name: '2026-11-24-11-order-events', ...orderEvents },
  { name: '2026-11-24-12-operators', ...operators },
  { name: '2026-11-24-13-saved-cards', ...savedCards },
  { name: '2026-11-25-14-attempt-action-url', ...attemptActionUrl },
  { name: '2026-11-27-15-attempt-saved-card', ...attemptSavedCard },
  { name: '2026-11-27-16-operation-key-digests', ...operationKeyDigests },
  { name: '2026-11-28-17-inbox-vault-tokens', ...inboxVaultTokens },
  { name: '2026-11-28-18-order-client-secret', ...orderClientSecret },
  { name: '2026-11-28-19-saved-card-syncs', ...savedCardSyncs },
  { name: '2026-11-29-20-review-resolutions', ...reviewResolutions },
  { name: '2026-11-30-21-inbox-retention', ...inboxRetention },
  { name: '2026-11-30-22-order-customer-index', ...orderCustomerIndex },
  { name: '2026-11-30-23-order-requests', ...orderRequests },
  { name: '2026-11-30-24-order-closure', ...orderClosure },
  { name: '2026-12-01-25-payment-links', ...paymentLinks },
  { name: '2026-12-02-26-unmatched-payment', ...unmatchedPayment },
  { name: '2026-12-02-27-dispute-keys', ...disputeKeys },
  { name: '2026-12-02-28-inbox-masked-fields', ...inboxMaskedFields },
  { name: '2026-12-03-29-order-merchant', ...orderMerchant },
  { name: '2026-12-03-30-order-event-merchant', ...orderEventMerchant },
  { name: '2026-12-03-31-merchant-scopes', ...merchantScopes },
  { name: '2026-12-03-32-merchant-keys', ...merchantKeys },
  { name: '2026-12-03-33-webhook-merchant', ...webhookMerchant },
  { name: '2026-12-03-34-unmatched-merchant', ...unmatchedMerchant },
];
