# C packaging for ribbon-kernel: builds the static and the shared library
# and installs them with the header, a pkg-config file and a CMake package.
#
#   make                          # the libraries, in $(OUT) (target/release/c/)
#   make install PREFIX=/usr/local [DESTDIR=...] [LIBDIR=...] [INCLUDEDIR=...]
#   cc app.c $(pkg-config --cflags --libs ribbon_kernel)
#   find_package(ribbon_kernel) ... target_link_libraries(app ribbon_kernel::ribbon_kernel)
#
# TARGET=thumbv7em-none-eabihf (or any rustup target) cross-builds the
# static library; the shared one is built for a Linux host only, unless
# SHARED=1 and CC names the target's C compiler (SHARED= skips it). The cargo target folder is
# cargo's own ($CARGO_TARGET_DIR, .cargo/config.toml), as `cargo metadata`
# reports it.
#
# The static library is the archive cargo writes, relinked by
# tools/localize-symbols.sh into one object whose only global symbols are
# the ribbon_* functions: it links beside other Rust static libraries. The
# shared library is linked from that object and exports the same names.

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR ?= $(LIBDIR)/cmake/ribbon_kernel
CARGO ?= cargo
CC ?= cc
INSTALL ?= install

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
MAJOR := $(word 1,$(subst ., ,$(VERSION)))
MINOR := $(word 2,$(subst ., ,$(VERSION)))
# The soname changes with every release that may break the ABI: the major
# version, or for 0.x the minor one (as cargo-c names them).
ifeq ($(MAJOR),0)
SONAME := libribbon_kernel.so.0.$(MINOR)
else
SONAME := libribbon_kernel.so.$(MAJOR)
endif
REALNAME := libribbon_kernel.so.$(VERSION)

TARGET_DIR := $(shell $(CARGO) metadata --format-version 1 --no-deps 2>/dev/null | \
	sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
ifeq ($(TARGET_DIR),)
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
endif
ifdef TARGET
TARGET_FLAG := --target $(TARGET)
RELEASE := $(TARGET_DIR)/$(TARGET)/release
SHARED ?=
else
RELEASE := $(TARGET_DIR)/release
# The shared library's link options are GNU ld's (ELF): Linux hosts.
SHARED ?= $(if $(filter Linux,$(shell uname -s)),1)
endif
RAW := $(RELEASE)/libribbon_kernel.a
OUT := $(RELEASE)/c
STATIC := $(OUT)/libribbon_kernel.a
DYNAMIC := $(OUT)/$(REALNAME)
GENERATED := $(OUT)/ribbon_kernel.pc $(OUT)/ribbon_kernelConfig.cmake \
	$(OUT)/ribbon_kernelConfigVersion.cmake

# A folder as seen from the CMake package's (which finds the library
# relative to itself), or as given where realpath cannot say (not GNU).
relative = $(or $(shell realpath -m --relative-to=$(CMAKEDIR) $(1) 2>/dev/null),$(1))

.PHONY: all static shared install uninstall clean
all: static $(if $(SHARED),shared) $(GENERATED)

# cargo decides what to rebuild; the relinking takes a second.
static:
	$(CARGO) rustc --release --lib --no-default-features --features staticlib \
		--crate-type staticlib $(TARGET_FLAG)
	sh tools/localize-symbols.sh $(RAW) $(STATIC)

# Linked from the static library's one object: every ribbon_* function
# (the only global symbols, so the only roots --gc-sections keeps), nothing
# else exported (tools/ribbon_kernel.map), no debug info (as cargo's own
# release cdylibs). Needs from libc what the static library needs.
shared: static
	$(CC) -shared -o $(DYNAMIC) -Wl,-soname,$(SONAME) \
		-Wl,--whole-archive $(STATIC) -Wl,--no-whole-archive \
		-Wl,--version-script=tools/ribbon_kernel.map -Wl,--gc-sections \
		-Wl,--no-undefined -Wl,-z,noexecstack -Wl,--strip-debug
	ln -sf $(REALNAME) $(OUT)/$(SONAME)
	ln -sf $(SONAME) $(OUT)/libribbon_kernel.so

# Rewritten every time: they hold the install paths, which may differ from
# the last install.
$(OUT)/ribbon_kernel.pc: ribbon_kernel.pc.in Cargo.toml FORCE
	@mkdir -p $(OUT)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@
$(OUT)/ribbon_kernelConfig.cmake: cmake/ribbon_kernelConfig.cmake.in FORCE
	@mkdir -p $(OUT)
	sed -e 's|@REL_LIBDIR@|$(call relative,$(LIBDIR))|' \
		-e 's|@REL_INCLUDEDIR@|$(call relative,$(INCLUDEDIR))|' \
		-e 's|@SONAME@|$(SONAME)|' $< > $@
$(OUT)/ribbon_kernelConfigVersion.cmake: cmake/ribbon_kernelConfigVersion.cmake.in Cargo.toml FORCE
	@mkdir -p $(OUT)
	sed -e 's|@VERSION@|$(VERSION)|' $< > $@
.PHONY: FORCE
FORCE:

install: all
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(CMAKEDIR)
	$(INSTALL) -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libribbon_kernel.a
ifneq ($(SHARED),)
	$(INSTALL) -m 755 $(DYNAMIC) $(DESTDIR)$(LIBDIR)/$(REALNAME)
	ln -sf $(REALNAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libribbon_kernel.so
endif
	$(INSTALL) -m 644 include/ribbon_kernel.h $(DESTDIR)$(INCLUDEDIR)/ribbon_kernel.h
	$(INSTALL) -m 644 $(OUT)/ribbon_kernel.pc $(DESTDIR)$(PKGCONFIGDIR)/ribbon_kernel.pc
	$(INSTALL) -m 644 $(OUT)/ribbon_kernelConfig.cmake $(OUT)/ribbon_kernelConfigVersion.cmake \
		$(DESTDIR)$(CMAKEDIR)/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libribbon_kernel.a $(DESTDIR)$(LIBDIR)/$(REALNAME) \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libribbon_kernel.so \
		$(DESTDIR)$(INCLUDEDIR)/ribbon_kernel.h $(DESTDIR)$(PKGCONFIGDIR)/ribbon_kernel.pc \
		$(DESTDIR)$(CMAKEDIR)/ribbon_kernelConfig.cmake \
		$(DESTDIR)$(CMAKEDIR)/ribbon_kernelConfigVersion.cmake
	-rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null

clean:
	rm -rf $(OUT)
