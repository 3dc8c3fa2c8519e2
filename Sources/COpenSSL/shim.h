// COpenSSL: the parts of OpenSSL's libcrypto cog-cred uses (HMAC-SHA256 for
// Cognito's SECRET_HASH). libcurl already loads libcrypto, so this costs no
// extra library at run time.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>

#endif
