// CLonglinkOpenSSL: the system OpenSSL (Debian's libssl/libcrypto 3.0) plus the few wrappers Swift needs because
// the OpenSSL calls it would use are macros (SSL_CTX_set_min_proto_version, SSL_set_tlsext_host_name, ...).
// Only LonglinkOpenSSL imports this module (`internal import`), so no OpenSSL type leaves that adapter.
#pragma once
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/crypto.h>
#include <stddef.h>
#include <stdint.h>

// SSL_CTX_set_min_proto_version / SSL_CTX_set_max_proto_version are SSL_CTX_ctrl macros Swift cannot see.
// `version` is e.g. TLS1_2_VERSION; 0 means "no limit".
int CLonglinkOpenSSL_CTX_set_proto_versions(SSL_CTX *ctx, int min_version, int max_version);

// SSL_CTX_set_mode is an SSL_CTX_ctrl macro. Sets the modes a non-blocking event-loop transport needs:
// partial writes (a write returns what fitted), a write buffer that may move between retries (Swift arrays do),
// and releasing idle read/write buffers (memory per idle connection).
void CLonglinkOpenSSL_CTX_set_nonblocking_modes(SSL_CTX *ctx);

// SSL_OP_CIPHER_SERVER_PREFERENCE is an SSL_OP_BIT macro. Servers: the server's suite order wins (TLS 1.3 and 1.2).
void CLonglinkOpenSSL_CTX_prefer_server_ciphers(SSL_CTX *ctx);

// SSL_CTX_set_session_cache_mode is an SSL_CTX_ctrl macro; a gateway's clients reconnect often, so the server
// keeps its default session cache (TLS 1.3 tickets work either way); this turns it off for a client context.
void CLonglinkOpenSSL_CTX_disable_session_cache(SSL_CTX *ctx);

// SSL_set_tlsext_host_name is an SSL_ctrl macro. Sets SNI (skipped for IP literals, which RFC 6066 forbids in
// SNI) and the name the peer certificate must match: a DNS name (SAN dNSName / CN) or an IP address (SAN iPAddress),
// which need different X509_VERIFY_PARAM setters. Returns 1 on success.
int CLonglinkOpenSSL_set_server_name(SSL *ssl, const char *name);

// SSL_set_fd uses OpenSSL's socket BIO, which writes with write(2): a peer that closed turns the next write
// into SIGPIPE, killing a process that has not ignored it (a library must not require that). This attaches a
// socket BIO whose writes use send(MSG_NOSIGNAL) instead (EPIPE comes back as an error), everything else being
// the standard socket BIO's. Returns 1 on success.
int CLonglinkOpenSSL_set_fd_nosigpipe(SSL *ssl, int fd);

// HMAC-SHA256 through the one-shot HMAC() (EVP_sha256() is a function, but this keeps EVP types out of Swift).
// `out` must hold 32 bytes. Returns 1 on success.
int CLonglinkOpenSSL_hmac_sha256(const void *key, size_t key_length, const void *data, size_t data_length,
                                 unsigned char *out);

// ERR_get_error + ERR_error_string_n for the most recent error on this thread's queue, then clears the queue
// (OpenSSL's error queue is per thread; a stale entry would be blamed on the next call). Writes "" if empty.
void CLonglinkOpenSSL_last_error(char *buffer, size_t length);

// SHA-256 of the peer certificate's SubjectPublicKeyInfo (DER), the value mobile apps pin (HPKP's pin-sha256).
// Needs i2d_X509_PUBKEY's out-pointer dance and EVP digest plumbing, kept here. `out` must hold 32 bytes.
// Returns 1 on success, 0 when there is no peer certificate or hashing failed.
int CLonglinkOpenSSL_peer_spki_sha256(SSL *ssl, unsigned char *out);

// Adds every certificate in PEM `bytes` to the context's trust store (a CA given as bytes, not a file: apps
// bundle it). PEM_read_bio_X509 loops over a memory BIO. Returns the number of certificates added (0: none/bad).
int CLonglinkOpenSSL_CTX_add_trusted_pem(SSL_CTX *ctx, const void *bytes, size_t length);

// ---- TLS session resumption (session tickets, TLS 1.3 PSK tickets) ----
// The callbacks OpenSSL needs for these are C function pointers, and the key and session stores they read live
// next to them; Swift only calls the functions below.

// Server: encrypt session tickets with keys this module holds, 80 bytes each in nginx's `ssl_session_ticket_key`
// layout (16-byte name, 32-byte HMAC-SHA256 key, 32-byte AES-256 key). `keys` holds `count` such keys: the first
// encrypts new tickets, every one decrypts (a ticket under a later key is renewed under the first). With
// `rotation_seconds` > 0 and `count` == 0, keys are random and rotated: a new one encrypts after
// `rotation_seconds`, the previous one still decrypts for one more period. Also sets the ticket lifetime,
// one ticket per full TLS 1.3 handshake, and turns the server's stateful session cache off (tickets only).
// A resumption keeps its ticket (no new one) while the current key opened it and less than half its lifetime is
// gone; otherwise it gets a fresh ticket under the current key. Returns 1 on success.
int CLonglinkOpenSSL_CTX_use_ticket_keys(SSL_CTX *ctx, const unsigned char *keys, size_t count, long rotation_seconds);

// Server: hands the key ring of `from` (random, rotating keys) to `to` as well, so a reloaded context keeps
// accepting the tickets the old one issued. Returns 1 on success (0: `from` has no ring).
int CLonglinkOpenSSL_CTX_share_ticket_keys(SSL_CTX *to, SSL_CTX *from);

// Server: no session tickets and no session cache (every handshake is a full one).
void CLonglinkOpenSSL_CTX_disable_resumption(SSL_CTX *ctx);

// Client: keep the newest session (ticket) of each connection in a slot of a store attached to the context
// (a client has one slot, 0; a load generator one per simulated client). Each slot keeps a private copy of its
// session and every offer gets a copy of that (no DER round trip), so a connection that ended without
// close_notify does not spoil the kept one. Returns 1 on success.
int CLonglinkOpenSSL_CTX_enable_client_sessions(SSL_CTX *ctx);

// Client: before the handshake (after the server name is set), remembers `slot` on `ssl` (new tickets go there)
// and offers the session kept in it when it was made for the same server name or IP address (a resumed handshake
// checks no certificate). Returns 1 when a session was offered, 0 when none, -1 on error.
int CLonglinkOpenSSL_offer_session(SSL *ssl, long slot);

// Server: tickets encrypted (new or renewed) with the context's key ring since the ring was made (shared rings
// count together). 0 without a ring.
long CLonglinkOpenSSL_CTX_tickets_issued(SSL_CTX *ctx);

// Client: tickets received and kept in the context's session store (new-session callbacks). 0 without a store.
long CLonglinkOpenSSL_CTX_sessions_saved(SSL_CTX *ctx);

// Whether the handshake resumed a session (SSL_session_reused is a macro in some OpenSSL versions).
int CLonglinkOpenSSL_session_reused(const SSL *ssl);
