# What every guest program directory shares: the cross compiler, the
# output directory and its rules. A directory's Makefile sets PROGS (and
# CFLAGS, DEPS for headers its programs include), then includes this.
CROSS_COMPILE ?= aarch64-linux-gnu-
CROSS ?= $(CROSS_COMPILE)
CC := $(CROSS)gcc
# O= (as the workbench passes it) or B= selects the output directory.
B ?= $(if $(O),$(O),build)

all: $(addprefix $(B)/,$(PROGS))

$(B)/%: %.c $(DEPS) | $(B)
	$(CC) $(CFLAGS) -o $@ $<

$(B):
	mkdir -p $@

clean:
	rm -rf $(B)

.PHONY: all clean
