// COpenSSL: the parts of OpenSSL's libcrypto cog-cred uses: HMAC-SHA256
// (Cognito's SECRET_HASH and SRP signature), constant-time big-number
// arithmetic (SRP), HKDF and RS256 verification (status --verify).
// libcurl already loads libcrypto, so this costs no extra library at run time.
//
// The two helpers below exist because OpenSSL 3 configures HKDF and RSA keys
// through OSSL_PARAM arrays and macros that Swift cannot import; each is a
// straight sequence of OpenSSL calls, no cryptography of our own.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

/// HKDF-SHA256 (RFC 5869) through EVP_KDF. Returns 1 on success.
static inline int copenssl_hkdf_sha256(const unsigned char *ikm, size_t ikm_len,
                                       const unsigned char *salt, size_t salt_len,
                                       const unsigned char *info, size_t info_len,
                                       unsigned char *out, size_t out_len) {
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    if (kdf == NULL) return 0;
    EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (ctx == NULL) return 0;
    OSSL_PARAM params[5];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len);
    params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len);
    params[3] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_len);
    params[4] = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(ctx, out, out_len, params) == 1;
    EVP_KDF_CTX_free(ctx);
    return ok;
}

/// Verifies an RSASSA-PKCS1-v1_5 SHA-256 signature (JWS "RS256") with the
/// public key given as big-endian modulus and exponent (a JWK's n and e).
/// Returns 1 valid, 0 invalid, -1 when the key cannot be built.
static inline int copenssl_rs256_verify(const unsigned char *n, size_t n_len,
                                        const unsigned char *e, size_t e_len,
                                        const unsigned char *data, size_t data_len,
                                        const unsigned char *sig, size_t sig_len) {
    int result = -1;
    BIGNUM *bn_n = BN_bin2bn(n, (int)n_len, NULL);
    BIGNUM *bn_e = BN_bin2bn(e, (int)e_len, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *pctx = NULL;
    EVP_PKEY *pkey = NULL;
    EVP_MD_CTX *md = NULL;
    if (!bn_n || !bn_e || !bld) goto done;
    if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n)) goto done;
    if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e)) goto done;
    params = OSSL_PARAM_BLD_to_param(bld);
    pctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (!params || !pctx || EVP_PKEY_fromdata_init(pctx) <= 0) goto done;
    if (EVP_PKEY_fromdata(pctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) goto done;
    md = EVP_MD_CTX_new();
    if (!md || EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pkey) <= 0) goto done;
    result = EVP_DigestVerify(md, sig, sig_len, data, data_len) == 1 ? 1 : 0;
done:
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(pkey);
    EVP_PKEY_CTX_free(pctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn_n);
    BN_free(bn_e);
    return result;
}

#endif
