# make install PREFIX=/usr/local   (and DESTDIR=... for staging)
# make uninstall PREFIX=/usr/local
#
# The layout (the Debian package uses it too): the front binary in bin/, the
# command line in lib/cog-cred/, the names git and docker look for as links,
# shell completions generated from the command definitions, docs.
PREFIX ?= /usr/local
DESTDIR ?=
BIN := $(shell swift build -c release --show-bin-path 2>/dev/null)

MAN := .build/cog-cred.1
VERSION := $(shell sed -n 's/^public let cogCredVersion = "\(.*\)"$$/\1/p' Sources/CogCredWrite/Version.swift)

.PHONY: build man install uninstall

build:
	scripts/build >/dev/null

# The man page: swift-argument-parser's generate-manual plugin renders the
# command definitions; the hand-written sections (exit status, environment,
# files, attributes, examples) replace its generic EXIT STATUS, and
# packaging/man/tidy.py makes the whole lint-clean (mandoc -T lint, groff -ww).
# (The plugin builds the release products without --static-swift-stdlib;
# install therefore builds again after it.)
man:
	swift package generate-manual --configuration release >/dev/null
	{ sed '/^\.Sh "EXIT STATUS"/,$$d' .build/plugins/GenerateManual/outputs/cog-cred-cli/cog-cred.1; \
	  cat packaging/man/sections.mdoc; } | python3 packaging/man/tidy.py $(VERSION) > $(MAN)

install: man
	scripts/build >/dev/null
	install -D -m 0755 .build/front/cog-cred $(DESTDIR)$(PREFIX)/bin/cog-cred
	install -D -m 0755 $(BIN)/cog-cred-cli $(DESTDIR)$(PREFIX)/lib/cog-cred/cog-cred-cli
	ln -sf cog-cred $(DESTDIR)$(PREFIX)/bin/git-credential-cog-cred
	ln -sf cog-cred $(DESTDIR)$(PREFIX)/bin/docker-credential-cog-cred
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d $(DESTDIR)$(PREFIX)/share/doc/cog-cred
	# Sourced by bash-completion, never run: no hashbang (lintian's bash-completion-with-hashbang).
	$(BIN)/cog-cred-cli --generate-completion-script bash | sed '1{/^#!/d;}' > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cog-cred
	$(BIN)/cog-cred-cli --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_cog-cred
	$(BIN)/cog-cred-cli --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/cog-cred.fish
	install -m 0644 README.md docs/*.md docs/*.png $(DESTDIR)$(PREFIX)/share/doc/cog-cred/
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/doc/cog-cred/integrations docs/integrations/*.md
	install -D -m 0644 $(MAN) $(DESTDIR)$(PREFIX)/share/man/man1/cog-cred.1
	ln -sf cog-cred.1 $(DESTDIR)$(PREFIX)/share/man/man1/git-credential-cog-cred.1
	ln -sf cog-cred.1 $(DESTDIR)$(PREFIX)/share/man/man1/docker-credential-cog-cred.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cog-cred $(DESTDIR)$(PREFIX)/bin/git-credential-cog-cred \
		$(DESTDIR)$(PREFIX)/bin/docker-credential-cog-cred \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/cog-cred \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_cog-cred \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/cog-cred.fish \
		$(DESTDIR)$(PREFIX)/share/man/man1/cog-cred.1 $(DESTDIR)$(PREFIX)/share/man/man1/git-credential-cog-cred.1 \
		$(DESTDIR)$(PREFIX)/share/man/man1/docker-credential-cog-cred.1
	rm -rf $(DESTDIR)$(PREFIX)/lib/cog-cred $(DESTDIR)$(PREFIX)/share/doc/cog-cred
