use super::*;
use ring::signature::UnparsedPublicKey;

fn part(jwt: &str, i: usize) -> Value {
    let seg = jwt.split('.').nth(i).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(seg).unwrap()).unwrap()
}

/// Checks the ES256 signature against the JWK the proof itself carries.
fn verifies(jwt: &str) -> bool {
    let jwk = &part(jwt, 0)["jwk"];
    let b = |k: &str| URL_SAFE_NO_PAD.decode(jwk[k].as_str().unwrap()).unwrap();
    let mut point = vec![4u8];
    point.extend(b("x"));
    point.extend(b("y"));
    let (input, sig) = jwt.rsplit_once('.').unwrap();
    let sig = URL_SAFE_NO_PAD.decode(sig).unwrap();
    UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
        .verify(input.as_bytes(), &sig)
        .is_ok()
}

fn pem_of(der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    )
}

#[test]
fn a_resource_proof_has_every_claim_and_verifies_with_its_own_jwk() {
    let key = SigningKey::ephemeral().unwrap();
    let proof = dpop_proof(
        &key,
        &ProofFor {
            htm: "POST",
            url: "https://user:pw@MCP.example:443/mcp?api_key=k#frag",
            access_token: Some("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
            nonce: Some("n-1"),
            iat: 1_700_000_000,
            jti: "j1",
        },
    )
    .unwrap();
    let header = part(&proof, 0);
    assert_eq!(header["typ"], "dpop+jwt");
    assert_eq!(header["alg"], "ES256");
    assert_eq!(header["jwk"]["kty"], "EC");
    assert!(header["jwk"].get("d").is_none(), "no private member");
    let claims = part(&proof, 1);
    assert_eq!(claims["htm"], "POST");
    // No query, no fragment, no userinfo; the default port dropped.
    assert_eq!(claims["htu"], "https://mcp.example/mcp");
    assert_eq!(claims["iat"], 1_700_000_000);
    assert_eq!(claims["jti"], "j1");
    assert_eq!(claims["nonce"], "n-1");
    // RFC 9449 §7.1's example token and its `ath`.
    assert_eq!(claims["ath"], "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo");
    assert!(verifies(&proof));
    // The thumbprint is the JWK's (what `cnf.jkt` of the bound token names).
    assert_eq!(jwk_thumbprint(&header["jwk"]).unwrap(), key.thumbprint());
}

#[test]
fn a_token_request_proof_has_no_ath_and_no_nonce_until_one_is_given() {
    let key = SigningKey::ephemeral().unwrap();
    let p = ProofFor {
        htm: "POST",
        url: "http://127.0.0.1:9/token",
        access_token: None,
        nonce: None,
        iat: 1,
        jti: "a",
    };
    let claims = part(&dpop_proof(&key, &p).unwrap(), 1);
    assert!(claims.get("ath").is_none() && claims.get("nonce").is_none());
    assert_eq!(claims["htu"], "http://127.0.0.1:9/token");
    assert!(dpop_proof(
        &key,
        &ProofFor {
            url: "not a url",
            ..p
        }
    )
    .is_err());
    assert!(dpop_proof(
        &key,
        &ProofFor {
            url: "file:///etc/passwd",
            ..p
        }
    )
    .is_err());
}

#[test]
fn rfc_7638_thumbprint_vector() {
    let jwk = json!({
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    });
    assert_eq!(
        jwk_thumbprint(&jwk).as_deref(),
        Some("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    );
    assert_eq!(jwk_thumbprint(&json!({ "kty": "oct", "k": "x" })), None);
}

#[test]
fn a_configured_key_is_the_same_key_each_time_and_bad_ones_say_only_what_was_expected() {
    let rng = SystemRandom::new();
    let der =
        EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pem = pem_of(der.as_ref());
    let a = SigningKey::from_pem(&pem, SigningAlgorithm::Es256).unwrap();
    let b = SigningKey::from_pem(&pem, SigningAlgorithm::Es256).unwrap();
    assert_eq!(a.thumbprint(), b.thumbprint());
    assert_ne!(
        a.thumbprint(),
        SigningKey::ephemeral().unwrap().thumbprint()
    );
    // A P-256 key is no RSA key; garbage is no key; neither error carries the input.
    let e = SigningKey::from_pem(&pem, SigningAlgorithm::Rs256)
        .err()
        .unwrap();
    assert_eq!(e, "a PKCS#8 RSA private key");
    let e = SigningKey::from_pem(
        "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----",
        SigningAlgorithm::Es256,
    )
    .err()
    .unwrap();
    assert_eq!(e, "a PKCS#8 P-256 private key");
    assert!(SigningKey::from_pem("", SigningAlgorithm::Es256).is_err());
}

#[test]
fn only_nonces_of_nqchars_are_taken() {
    assert_eq!(
        valid_nonce("eyJ7S_zG.eyJH0-Z.HX4w-7v"),
        Some("eyJ7S_zG.eyJH0-Z.HX4w-7v")
    );
    assert_eq!(valid_nonce("!#[]~"), Some("!#[]~"));
    for bad in ["", "a b", "a\"b", "a\\b", "a\r\nX-Evil: 1", "é", "\u{7f}"] {
        assert_eq!(valid_nonce(bad), None, "{bad:?}");
    }
    assert!(valid_nonce(&"n".repeat(512)).is_some());
    assert!(valid_nonce(&"n".repeat(513)).is_none());
}
