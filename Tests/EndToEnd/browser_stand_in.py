#!/usr/bin/env python3
"""A person at a browser, for the docs' browser sign-in examples ($BROWSER).

Given the managed login's address, it does what the person would: opens the
sign-in page of the project's Cognito double, signs in as the docs' user
(alice@example.com, $PW), and follows the redirect back to cog-cred's
loopback listener. The real browser path (chromium through selenium) is
test_managed_login.py's; this stands in for it where a docs example runs.
"""
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

from support import NoRedirects


def main(address):
    opener = urllib.request.build_opener(NoRedirects)
    # cog-cred's one-time start address sends the browser on to the managed login.
    try:
        opener.open(address, timeout=10)
        raise SystemExit("the start address did not redirect")
    except urllib.error.HTTPError as redirect:
        address = redirect.headers["Location"]
    page = opener.open(address, timeout=10).read().decode()
    session = re.search(r'name="login_session" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode({"login_session": session, "username": "alice@example.com",
                                   "password": os.environ["PW"]}).encode()
    try:
        opener.open(urllib.request.Request(urllib.parse.urljoin(address, "/login"), data=form, method="POST"),
                    timeout=10)
        raise SystemExit("the sign-in page did not redirect")
    except urllib.error.HTTPError as redirect:
        back = redirect.headers["Location"]
    # The browser follows the redirect to cog-cred's listener.
    urllib.request.urlopen(back, timeout=10).read()


if __name__ == "__main__":
    main(sys.argv[1])
