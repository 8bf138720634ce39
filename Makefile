# C packaging for ribbon-kernel: builds the static library and installs it
# with its header and a pkg-config file.
#
#   make                      # target/release/libribbon_kernel.a
#   make install PREFIX=/usr/local [DESTDIR=...]
#   cc app.c $(pkg-config --cflags --libs ribbon_kernel)
#
# TARGET=thumbv7em-none-eabihf (or any rustup target) cross-builds.

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
CARGO ?= cargo
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)

ifdef TARGET
TARGET_FLAG := --target $(TARGET)
LIB := target/$(TARGET)/release/libribbon_kernel.a
else
LIB := target/release/libribbon_kernel.a
endif

# The .pc file is rewritten every time: it holds PREFIX, which may differ
# from the last install.
.PHONY: all install uninstall clean ribbon_kernel.pc
all: $(LIB)

$(LIB): Cargo.toml build.rs $(wildcard src/*.rs src/*/*.rs arch/*.rs arch/*/*.rs)
	$(CARGO) rustc --release --lib --no-default-features --features staticlib \
		--crate-type staticlib $(TARGET_FLAG)

ribbon_kernel.pc: ribbon_kernel.pc.in Cargo.toml
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

install: $(LIB) ribbon_kernel.pc
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libribbon_kernel.a
	install -m 644 include/ribbon_kernel.h $(DESTDIR)$(INCLUDEDIR)/ribbon_kernel.h
	install -m 644 ribbon_kernel.pc $(DESTDIR)$(LIBDIR)/pkgconfig/ribbon_kernel.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libribbon_kernel.a $(DESTDIR)$(INCLUDEDIR)/ribbon_kernel.h \
		$(DESTDIR)$(LIBDIR)/pkgconfig/ribbon_kernel.pc

clean:
	rm -f ribbon_kernel.pc
