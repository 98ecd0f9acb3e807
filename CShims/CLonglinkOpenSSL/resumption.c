// TLS session resumption: the server's session ticket keys (random and rotating, or from a shared file) with
// OpenSSL's ticket key callback, and a client's saved sessions (one slot per simulated client) with its
// new-session callback. See CLonglinkOpenSSL.h.
#include "CLonglinkOpenSSL.h"
#include <openssl/evp.h>
#include <pthread.h>
#include <string.h>
#include <openssl/rand.h>
#include <openssl/core_names.h>
#include <stdlib.h>
#include <time.h>

#define LL_TICKET_KEY_BYTES 80
#define LL_MAX_TICKET_KEYS 8

typedef struct {
    unsigned char name[16];
    unsigned char hmac[32];
    unsigned char aes[32];
} ll_ticket_key;

typedef struct {
    pthread_mutex_t lock;
    int references;
    int count;
    ll_ticket_key keys[LL_MAX_TICKET_KEYS];
    long rotation_seconds;  // 0: fixed keys (from a file)
    time_t current_since;   // when keys[0] started encrypting
    long issued;            // tickets encrypted (new or renewed) since the ring was made
} ll_ticket_ring;

static int ring_index = -1;
static int sessions_index = -1;
static int slot_index = -1;
static pthread_once_t indexes_once = PTHREAD_ONCE_INIT;

static void ring_release(ll_ticket_ring *ring) {
    if (ring == NULL) return;
    pthread_mutex_lock(&ring->lock);
    int left = --ring->references;
    pthread_mutex_unlock(&ring->lock);
    if (left == 0) {
        OPENSSL_cleanse(ring->keys, sizeof(ring->keys));
        pthread_mutex_destroy(&ring->lock);
        free(ring);
    }
}

static void ring_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp) {
    (void)parent; (void)ad; (void)idx; (void)argl; (void)argp;
    ring_release((ll_ticket_ring *)ptr);
}

typedef struct {
    // A private copy (SSL_SESSION_dup) of the newest session, or NULL. Never handed to an SSL itself: each offer
    // gets a copy of its own, so a connection that ends without close_notify (OpenSSL then marks its session not
    // resumable) cannot spoil the kept one. Copies, not DER bytes: d2i_SSL_SESSION re-parses the server's
    // certificate (OpenSSL 3.0's decoders), ~1.5 M instructions per reconnect; a copy shares it (X509_up_ref).
    SSL_SESSION *session;
    char *name;  // the name the certificate was checked against (DNS name or IP), or NULL
} ll_session_slot;

typedef struct {
    pthread_mutex_t lock;
    ll_session_slot *slots;
    long capacity;
    long saved;  // sessions (tickets) the server sent that were kept
} ll_session_store;

#define LL_MAX_SESSION_SLOTS (1L << 20)

static void sessions_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp) {
    (void)parent; (void)ad; (void)idx; (void)argl; (void)argp;
    ll_session_store *store = ptr;
    if (store == NULL) return;
    for (long i = 0; i < store->capacity; i++) {
        SSL_SESSION_free(store->slots[i].session);
        OPENSSL_free(store->slots[i].name);
    }
    free(store->slots);
    pthread_mutex_destroy(&store->lock);
    free(store);
}

static void indexes_init(void) {
    ring_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, ring_free);
    sessions_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, sessions_free);
    slot_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

// Makes keys[0] a fresh random key, keeping the previous one for decryption (rotating rings only).
static int ring_rotate_locked(ll_ticket_ring *ring, time_t now) {
    ll_ticket_key fresh;
    if (RAND_bytes((unsigned char *)&fresh, sizeof(fresh)) != 1) return 0;
    ring->keys[1] = ring->keys[0];
    ring->keys[0] = fresh;
    ring->count = ring->count == 0 ? 1 : 2;
    ring->current_since = now;
    OPENSSL_cleanse(&fresh, sizeof(fresh));
    return 1;
}

// The ticket cipher, fetched once: EVP_aes_256_cbc() is OpenSSL 3's legacy handle, which every
// EVP_EncryptInit_ex/EVP_DecryptInit_ex call turns into an implicit fetch (a provider lookup by name) on each
// handshake that issues or opens a ticket. NULL if the fetch failed (then the legacy handle is used).
static EVP_CIPHER *ticket_cipher_fetched = NULL;
static pthread_once_t ticket_cipher_once = PTHREAD_ONCE_INIT;

static void ticket_cipher_init(void) { ticket_cipher_fetched = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL); }

static const EVP_CIPHER *ticket_cipher(void) {
    pthread_once(&ticket_cipher_once, ticket_cipher_init);
    return ticket_cipher_fetched != NULL ? ticket_cipher_fetched : EVP_aes_256_cbc();
}

static int ticket_key_cb(SSL *ssl, unsigned char key_name[16], unsigned char *iv, EVP_CIPHER_CTX *cipher,
                         EVP_MAC_CTX *mac, int encrypt) {
    ll_ticket_ring *ring = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ring_index);
    if (ring == NULL) return encrypt ? -1 : 0;
    ll_ticket_key key;
    int position = -1;
    pthread_mutex_lock(&ring->lock);
    // Rotation is due on decryption as well: a ring that only resumes (no new tickets, see ticket_opened_cb)
    // would otherwise keep an expired current key, and a ticket under it would not be renewed.
    time_t now = time(NULL);
    if (ring->rotation_seconds > 0 && (ring->count == 0 || now - ring->current_since >= ring->rotation_seconds)) {
        (void)ring_rotate_locked(ring, now);  // on failure the current key stays in use
    }
    if (encrypt) {
        if (ring->count > 0) {
            key = ring->keys[0];
            position = 0;
            ring->issued++;
        }
    } else {
        for (int i = 0; i < ring->count; i++) {
            if (memcmp(ring->keys[i].name, key_name, 16) == 0) {
                key = ring->keys[i];
                position = i;
                break;
            }
        }
    }
    pthread_mutex_unlock(&ring->lock);
    if (position < 0) return encrypt ? -1 : 0;  // decrypting: unknown key, so a full handshake

    OSSL_PARAM params[3];
    params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key.hmac, sizeof(key.hmac));
    params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0);
    params[2] = OSSL_PARAM_construct_end();
    int ok;
    if (encrypt) {
        memcpy(key_name, key.name, 16);
        ok = RAND_bytes(iv, EVP_CIPHER_get_iv_length(ticket_cipher())) == 1 &&
             EVP_EncryptInit_ex(cipher, ticket_cipher(), NULL, key.aes, iv) == 1 && EVP_MAC_CTX_set_params(mac, params) == 1;
    } else {
        ok = EVP_DecryptInit_ex(cipher, ticket_cipher(), NULL, key.aes, iv) == 1 && EVP_MAC_CTX_set_params(mac, params) == 1;
    }
    OPENSSL_cleanse(&key, sizeof(key));
    if (!ok) return -1;
    return (encrypt || position == 0) ? 1 : 2;  // 2: valid, but renew the ticket under the current key
}

// Called after a ticket was opened (or not). A resumption whose ticket the current key opened keeps that ticket
// (no NewSessionTicket: no session serialisation, encryption, HMAC or record on the server, no parse and no
// new-session callback on the client) until half the ticket's lifetime is gone; past that, or when an older key
// opened it (ticket_key_cb returned 2: SSL_TICKET_SUCCESS_RENEW), the server sends a fresh ticket, so a client
// that reconnects at least once per half lifetime never falls back to a full handshake. OpenSSL's own rule is
// the same without the half-lifetime renewal. The trade-off (a reused ticket links reconnects): README, TLS.
static SSL_TICKET_RETURN ticket_opened_cb(SSL *ssl, SSL_SESSION *session, const unsigned char *key_name,
                                          size_t key_name_length, SSL_TICKET_STATUS status, void *arg) {
    (void)ssl; (void)key_name; (void)key_name_length; (void)arg;
    switch (status) {
    case SSL_TICKET_SUCCESS: {
        long lifetime = SSL_SESSION_get_timeout(session);
        long age = (long)(time(NULL) - (time_t)SSL_SESSION_get_time(session));
        return (age < 0 || 2 * age >= lifetime) ? SSL_TICKET_RETURN_USE_RENEW : SSL_TICKET_RETURN_USE;
    }
    case SSL_TICKET_SUCCESS_RENEW:
        return SSL_TICKET_RETURN_USE_RENEW;
    default:  // SSL_TICKET_EMPTY, SSL_TICKET_NO_DECRYPT: a full handshake, which gets a new ticket
        return SSL_TICKET_RETURN_IGNORE_RENEW;
    }
}

static int server_resumption_settings(SSL_CTX *ctx, long lifetime_seconds) {
    // Stateless: tickets only. A stateful cache would hold every session in this process's memory and could
    // not resume on another node.
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_clear_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(ctx, 1);
    SSL_CTX_set_timeout(ctx, lifetime_seconds);
    return SSL_CTX_set_session_ticket_cb(ctx, NULL, ticket_opened_cb, NULL);
}

int CLonglinkOpenSSL_CTX_use_ticket_keys(SSL_CTX *ctx, const unsigned char *keys, size_t count, long rotation_seconds) {
    pthread_once(&indexes_once, indexes_init);
    if (ring_index < 0 || count > LL_MAX_TICKET_KEYS || (count == 0 && rotation_seconds <= 0)) return 0;
    ll_ticket_ring *ring = calloc(1, sizeof(ll_ticket_ring));
    if (ring == NULL) return 0;
    pthread_mutex_init(&ring->lock, NULL);
    ring->references = 1;
    ring->rotation_seconds = count == 0 ? rotation_seconds : 0;
    for (size_t i = 0; i < count; i++) {
        const unsigned char *bytes = keys + i * LL_TICKET_KEY_BYTES;
        memcpy(ring->keys[i].name, bytes, 16);
        memcpy(ring->keys[i].hmac, bytes + 16, 32);
        memcpy(ring->keys[i].aes, bytes + 48, 32);
    }
    ring->count = (int)count;
    if (count == 0 && !ring_rotate_locked(ring, time(NULL))) {
        ring_release(ring);
        return 0;
    }
    if (SSL_CTX_set_ex_data(ctx, ring_index, ring) != 1 || SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb) != 1) {
        SSL_CTX_set_ex_data(ctx, ring_index, NULL);
        ring_release(ring);
        return 0;
    }
    // A ticket stays usable while its key decrypts: one rotation period at least (fixed keys: a day).
    return server_resumption_settings(ctx, rotation_seconds > 0 && count == 0 ? rotation_seconds : 86400);
}

int CLonglinkOpenSSL_CTX_share_ticket_keys(SSL_CTX *to, SSL_CTX *from) {
    pthread_once(&indexes_once, indexes_init);
    ll_ticket_ring *ring = SSL_CTX_get_ex_data(from, ring_index);
    if (ring == NULL || ring->rotation_seconds <= 0) return 0;
    pthread_mutex_lock(&ring->lock);
    ring->references++;
    long rotation = ring->rotation_seconds;
    pthread_mutex_unlock(&ring->lock);
    ll_ticket_ring *previous = SSL_CTX_get_ex_data(to, ring_index);
    if (SSL_CTX_set_ex_data(to, ring_index, ring) != 1 || SSL_CTX_set_tlsext_ticket_key_evp_cb(to, ticket_key_cb) != 1) {
        ring_release(ring);
        return 0;
    }
    ring_release(previous);
    return server_resumption_settings(to, rotation);
}

void CLonglinkOpenSSL_CTX_disable_resumption(SSL_CTX *ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(ctx, 0);
}

// The name `ssl` checks the server certificate against (a DNS name or an IP address), as a fresh copy; NULL
// when it checks no name. A session is only offered again for the same name: a resumed handshake checks no
// certificate, so it must not carry a check made for one name over to another.
static char *checked_name(SSL *ssl) {
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    const char *host = X509_VERIFY_PARAM_get0_host(param, 0);
    if (host != NULL) return OPENSSL_strdup(host);
    return X509_VERIFY_PARAM_get1_ip_asc(param);
}

static int same_name(const char *a, const char *b) {
    if (a == NULL || b == NULL) return a == b;
    return strcmp(a, b) == 0;
}

static int client_new_session_cb(SSL *ssl, SSL_SESSION *session) {
    ll_session_store *store = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), sessions_index);
    long slot = (long)(intptr_t)SSL_get_ex_data(ssl, slot_index) - 1;  // stored + 1: NULL means "no slot"
    if (store == NULL || slot < 0 || slot >= LL_MAX_SESSION_SLOTS || !SSL_SESSION_is_resumable(session)) return 0;
    SSL_SESSION *copy = SSL_SESSION_dup(session);
    if (copy == NULL) return 0;
    pthread_mutex_lock(&store->lock);
    if (slot >= store->capacity) {
        long capacity = store->capacity == 0 ? 16 : store->capacity;
        while (capacity <= slot) capacity *= 2;
        if (capacity > LL_MAX_SESSION_SLOTS) capacity = LL_MAX_SESSION_SLOTS;
        ll_session_slot *grown = realloc(store->slots, (size_t)capacity * sizeof(ll_session_slot));
        if (grown == NULL) {
            pthread_mutex_unlock(&store->lock);
            SSL_SESSION_free(copy);
            return 0;
        }
        memset(grown + store->capacity, 0, (size_t)(capacity - store->capacity) * sizeof(ll_session_slot));
        store->slots = grown;
        store->capacity = capacity;
    }
    char *name = checked_name(ssl);
    SSL_SESSION *old = store->slots[slot].session;
    char *old_name = store->slots[slot].name;
    store->slots[slot].session = copy;
    store->slots[slot].name = name;
    store->saved++;
    pthread_mutex_unlock(&store->lock);
    SSL_SESSION_free(old);
    OPENSSL_free(old_name);
    return 0;  // 0: OpenSSL keeps its reference to `session` (the kept copy is ours)
}

int CLonglinkOpenSSL_CTX_enable_client_sessions(SSL_CTX *ctx) {
    pthread_once(&indexes_once, indexes_init);
    if (sessions_index < 0 || slot_index < 0) return 0;
    ll_session_store *store = calloc(1, sizeof(ll_session_store));
    if (store == NULL) return 0;
    pthread_mutex_init(&store->lock, NULL);
    if (SSL_CTX_set_ex_data(ctx, sessions_index, store) != 1) {
        sessions_free(NULL, store, NULL, 0, 0, NULL);
        return 0;
    }
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, client_new_session_cb);
    return 1;
}

int CLonglinkOpenSSL_offer_session(SSL *ssl, long slot) {
    pthread_once(&indexes_once, indexes_init);
    ll_session_store *store = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), sessions_index);
    if (store == NULL || slot < 0 || slot >= LL_MAX_SESSION_SLOTS) return 0;
    if (SSL_set_ex_data(ssl, slot_index, (void *)(intptr_t)(slot + 1)) != 1) return -1;
    SSL_SESSION *session = NULL;
    char *name = checked_name(ssl);
    pthread_mutex_lock(&store->lock);
    if (slot < store->capacity && store->slots[slot].session != NULL && same_name(store->slots[slot].name, name)) {
        session = SSL_SESSION_dup(store->slots[slot].session);
    }
    pthread_mutex_unlock(&store->lock);
    OPENSSL_free(name);
    if (session == NULL) return 0;
    int offered = 0;
    if (SSL_SESSION_is_resumable(session)) offered = SSL_set_session(ssl, session) == 1 ? 1 : -1;
    SSL_SESSION_free(session);
    return offered;
}

int CLonglinkOpenSSL_session_reused(const SSL *ssl) { return SSL_session_reused(ssl); }

long CLonglinkOpenSSL_CTX_tickets_issued(SSL_CTX *ctx) {
    pthread_once(&indexes_once, indexes_init);
    ll_ticket_ring *ring = SSL_CTX_get_ex_data(ctx, ring_index);
    if (ring == NULL) return 0;
    pthread_mutex_lock(&ring->lock);
    long issued = ring->issued;
    pthread_mutex_unlock(&ring->lock);
    return issued;
}

long CLonglinkOpenSSL_CTX_sessions_saved(SSL_CTX *ctx) {
    pthread_once(&indexes_once, indexes_init);
    ll_session_store *store = SSL_CTX_get_ex_data(ctx, sessions_index);
    if (store == NULL) return 0;
    pthread_mutex_lock(&store->lock);
    long saved = store->saved;
    pthread_mutex_unlock(&store->lock);
    return saved;
}
