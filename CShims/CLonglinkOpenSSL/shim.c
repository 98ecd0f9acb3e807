#include "CLonglinkOpenSSL.h"
#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <openssl/bio.h>
#include <openssl/pem.h>

int CLonglinkOpenSSL_CTX_set_proto_versions(SSL_CTX *ctx, int min_version, int max_version) {
    if (SSL_CTX_set_min_proto_version(ctx, min_version) != 1) return 0;
    return SSL_CTX_set_max_proto_version(ctx, max_version) == 1;
}

void CLonglinkOpenSSL_CTX_set_nonblocking_modes(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
}

void CLonglinkOpenSSL_CTX_prefer_server_ciphers(SSL_CTX *ctx) { SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE); }

void CLonglinkOpenSSL_CTX_disable_session_cache(SSL_CTX *ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

int CLonglinkOpenSSL_set_server_name(SSL *ssl, const char *name) {
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (X509_VERIFY_PARAM_set1_ip_asc(param, name) == 1) return 1;  // an IP literal: no SNI
    ERR_clear_error();
    if (SSL_set_tlsext_host_name(ssl, name) != 1) return 0;
    return X509_VERIFY_PARAM_set1_host(param, name, strlen(name));
}

int CLonglinkOpenSSL_hmac_sha256(const void *key, size_t key_length, const void *data, size_t data_length,
                                 unsigned char *out) {
    unsigned int length = 0;
    if (key_length > (size_t)INT32_MAX) return 0;
    // HMAC() with an empty key needs a non-NULL pointer.
    static const unsigned char empty = 0;
    return HMAC(EVP_sha256(), key_length ? key : &empty, (int)key_length, data, data_length, out, &length) != NULL &&
           length == 32;
}

void CLonglinkOpenSSL_last_error(char *buffer, size_t length) {
    unsigned long code = ERR_get_error();
    if (length > 0) buffer[0] = 0;
    if (code != 0) ERR_error_string_n(code, buffer, length);
    ERR_clear_error();
}

static BIO_METHOD *nosigpipe_method = NULL;
static pthread_once_t nosigpipe_once = PTHREAD_ONCE_INIT;

static int nosigpipe_write(BIO *bio, const char *data, int length) {
    int fd = -1;
    BIO_get_fd(bio, &fd);
    errno = 0;
    int written = (int)send(fd, data, (size_t)length, MSG_NOSIGNAL);
    BIO_clear_retry_flags(bio);
    if (written <= 0 && BIO_sock_should_retry(written)) BIO_set_retry_write(bio);
    return written;
}

static void nosigpipe_init(void) {
    const BIO_METHOD *base = BIO_s_socket();
    BIO_METHOD *method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "longlink socket");
    if (method == NULL) return;
    if (BIO_meth_set_write(method, nosigpipe_write) != 1 || BIO_meth_set_read(method, BIO_meth_get_read(base)) != 1 ||
        BIO_meth_set_puts(method, BIO_meth_get_puts(base)) != 1 || BIO_meth_set_ctrl(method, BIO_meth_get_ctrl(base)) != 1 ||
        BIO_meth_set_create(method, BIO_meth_get_create(base)) != 1 ||
        BIO_meth_set_destroy(method, BIO_meth_get_destroy(base)) != 1) {
        BIO_meth_free(method);
        return;
    }
    nosigpipe_method = method;
}

int CLonglinkOpenSSL_set_fd_nosigpipe(SSL *ssl, int fd) {
    pthread_once(&nosigpipe_once, nosigpipe_init);
    if (nosigpipe_method == NULL) return 0;
    BIO *bio = BIO_new(nosigpipe_method);
    if (bio == NULL) return 0;
    BIO_set_fd(bio, fd, BIO_NOCLOSE);
    SSL_set_bio(ssl, bio, bio);
    return 1;
}

int CLonglinkOpenSSL_peer_spki_sha256(SSL *ssl, unsigned char *out) {
    X509 *certificate = SSL_get1_peer_certificate(ssl);
    if (certificate == NULL) return 0;
    unsigned char *der = NULL;
    int length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate), &der);
    X509_free(certificate);
    if (length <= 0) return 0;
    unsigned int digest_length = 0;
    int ok = EVP_Digest(der, (size_t)length, out, &digest_length, EVP_sha256(), NULL);
    OPENSSL_free(der);
    return ok == 1 && digest_length == 32;
}

int CLonglinkOpenSSL_CTX_add_trusted_pem(SSL_CTX *ctx, const void *bytes, size_t length) {
    BIO *bio = BIO_new_mem_buf(bytes, (int)length);
    if (bio == NULL) return 0;
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    int added = 0;
    X509 *certificate;
    while ((certificate = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (X509_STORE_add_cert(store, certificate) == 1) added++;
        X509_free(certificate);
    }
    ERR_clear_error(); // the loop ends on a "no start line" error
    BIO_free(bio);
    return added;
}
