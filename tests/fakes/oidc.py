"""A small OpenID Connect issuer for the console's sign-in tests, written from the specs
(OpenID Connect Core 1.0, RFC 6749 and RFC 7636): discovery, an authorization endpoint that
signs in whoever the test says, a token endpoint that insists on PKCE (S256) and single-use
codes bound to client and redirect URI, and a JWKS. Tokens are RS256: the ID token's
audience is the client id and it carries the nonce; the access token is for the API."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import urlencode

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Form
from fastapi.responses import JSONResponse, RedirectResponse, Response

KID = "fake-issuer-1"


@dataclass
class FakeIssuer:
    issuer: str
    client_id: str
    api_audience: str
    login_as: tuple[str, list[str]] = ("cora@firm.nl", ["compliance"])
    refuse: str | None = None  # an OAuth error code to answer the authorization with
    wrong_nonce: bool = False
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    _codes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def _sign(self, claims: dict[str, Any]) -> str:
        now = int(time.time())
        body = {"iss": self.issuer, "iat": now, "nbf": now, "exp": now + 600, **claims}
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": KID})

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/.well-known/openid-configuration")
        def discovery() -> dict[str, Any]:
            return {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "id_token_signing_alg_values_supported": ["RS256"],
            }

        @app.get("/jwks")
        def jwks() -> dict[str, Any]:
            public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
            public.update({"kid": KID, "use": "sig", "alg": "RS256"})
            return {"keys": [public]}

        @app.get("/authorize")
        def authorize(
            response_type: str = "",
            client_id: str = "",
            redirect_uri: str = "",
            state: str = "",
            nonce: str = "",
            scope: str = "",
            code_challenge: str = "",
            code_challenge_method: str = "",
        ) -> Response:
            self.authorizations.append(
                {
                    "client_id": client_id,
                    "redirect_uri": redirect_uri,
                    "scope": scope,
                    "code_challenge": code_challenge,
                    "code_challenge_method": code_challenge_method,
                }
            )
            if client_id != self.client_id or not redirect_uri:
                return JSONResponse({"error": "invalid_client"}, status_code=400)
            back = redirect_uri + ("&" if "?" in redirect_uri else "?")
            if (
                response_type != "code"
                or "openid" not in scope.split()
                or code_challenge_method != "S256"
                or len(code_challenge) != 43
            ):
                return RedirectResponse(
                    back + urlencode({"error": "invalid_request", "state": state}), 302
                )
            if self.refuse:
                return RedirectResponse(
                    back + urlencode({"error": self.refuse, "state": state}), 302
                )
            code = secrets.token_urlsafe(24)
            sub, roles = self.login_as
            self._codes[code] = {
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "challenge": code_challenge,
                "nonce": nonce,
                "sub": sub,
                "roles": roles,
            }
            return RedirectResponse(back + urlencode({"code": code, "state": state}), 302)

        @app.post("/token")
        def token(
            grant_type: Annotated[str, Form()] = "",
            code: Annotated[str, Form()] = "",
            redirect_uri: Annotated[str, Form()] = "",
            client_id: Annotated[str, Form()] = "",
            code_verifier: Annotated[str, Form()] = "",
        ) -> JSONResponse:
            self.token_requests.append(
                {
                    "grant_type": grant_type,
                    "code": code,
                    "redirect_uri": redirect_uri,
                    "client_id": client_id,
                    "code_verifier": code_verifier,
                }
            )
            grant = self._codes.pop(code, None)  # single use, whatever happens next
            digest = hashlib.sha256(code_verifier.encode("ascii")).digest()
            challenge = base64.urlsafe_b64encode(digest).decode().rstrip("=")
            if (
                grant_type != "authorization_code"
                or grant is None
                or grant["client_id"] != client_id
                or grant["redirect_uri"] != redirect_uri
                or not 43 <= len(code_verifier) <= 128
                or challenge != grant["challenge"]
            ):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            nonce = "someone-else" if self.wrong_nonce else grant["nonce"]
            id_token = self._sign({"sub": grant["sub"], "aud": client_id, "nonce": nonce})
            access_token = self._sign(
                {"sub": grant["sub"], "aud": self.api_audience, "roles": grant["roles"]}
            )
            return JSONResponse(
                {
                    "access_token": access_token,
                    "id_token": id_token,
                    "token_type": "Bearer",
                    "expires_in": 600,
                }
            )

        return app
