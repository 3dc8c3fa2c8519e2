# make install PREFIX=/usr/local   (and DESTDIR=... for staging)
# make uninstall PREFIX=/usr/local
#
# The layout (the Debian package uses it too): the front binary in bin/, the
# command line in lib/cog-cred/, the names git and docker look for as links,
# shell completions generated from the command definitions, docs.
PREFIX ?= /usr/local
DESTDIR ?=
BIN := $(shell swift build -c release --show-bin-path 2>/dev/null)

MAN := .build/man
MANUAL := .build/manual/pages
# The commands also installed as NAME-cog-cred, the names git and docker run:
# the links in bin/ and the man pages' names.
HELPERS := git-credential docker-credential
VERSION := $(shell sed -n 's/^public let cogCredVersion = "\(.*\)"$$/\1/p' Sources/CogCredWrite/Version.swift)

.PHONY: build man install uninstall

build:
	scripts/build >/dev/null

# The man pages, one per command as git has them (man cog-cred-sign-in):
# swift-argument-parser's generate-manual tool renders the command
# definitions that the release cog-cred-cli prints (--experimental-dump-help),
# and packaging/man/pages.py names them, adds each command's help examples,
# the root's list of commands and its hand-written sections (exit status,
# environment, files, attributes, examples), and makes each page lint-clean
# (mandoc -T lint, groff -ww) with tidy.py. The tool's directory is emptied
# first: it would keep pages of commands since removed.
# The tool is what `swift package generate-manual` runs, without the
# plugin's own release build: that one builds without --static-swift-stdlib,
# so it compiled everything again (200 s), and scripts/build after it again.
# scripts/build --manual-tool builds it beside cog-cred-cli with the same
# settings, on the swift-argument-parser already compiled (15 s).
man: build
	rm -rf $(MANUAL) $(MAN)
	mkdir -p $(MANUAL)
	tool=$$(scripts/build --manual-tool) && \
		$$tool $(BIN)/cog-cred-cli --multi-page --output-directory $(MANUAL) >/dev/null
	python3 packaging/man/pages.py $(VERSION) $(MANUAL) $(BIN)/cog-cred-cli $(MAN) $(HELPERS)

install: man
	install -D -m 0755 .build/front/cog-cred $(DESTDIR)$(PREFIX)/bin/cog-cred
	install -D -m 0755 $(BIN)/cog-cred-cli $(DESTDIR)$(PREFIX)/lib/cog-cred/cog-cred-cli
	for helper in $(HELPERS); do ln -sf cog-cred $(DESTDIR)$(PREFIX)/bin/$$helper-cog-cred; done
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d $(DESTDIR)$(PREFIX)/share/doc/cog-cred
	# Sourced by bash-completion, never run: no hashbang (lintian's bash-completion-with-hashbang).
	$(BIN)/cog-cred-cli --generate-completion-script bash | sed '1{/^#!/d;}' > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cog-cred
	$(BIN)/cog-cred-cli --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_cog-cred
	$(BIN)/cog-cred-cli --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/cog-cred.fish
	install -m 0644 README.md docs/*.md docs/*.png $(DESTDIR)$(PREFIX)/share/doc/cog-cred/
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/doc/cog-cred/integrations docs/integrations/*.md
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/man/man1 $(MAN)/*.1
	for helper in $(HELPERS); do ln -sf cog-cred-$$helper.1 $(DESTDIR)$(PREFIX)/share/man/man1/$$helper-cog-cred.1; done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cog-cred \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/cog-cred \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_cog-cred \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/cog-cred.fish \
		$(DESTDIR)$(PREFIX)/share/man/man1/cog-cred.1 $(DESTDIR)$(PREFIX)/share/man/man1/cog-cred-*.1
	for helper in $(HELPERS); do \
		rm -f $(DESTDIR)$(PREFIX)/bin/$$helper-cog-cred $(DESTDIR)$(PREFIX)/share/man/man1/$$helper-cog-cred.1; done
	rm -rf $(DESTDIR)$(PREFIX)/lib/cog-cred $(DESTDIR)$(PREFIX)/share/doc/cog-cred
