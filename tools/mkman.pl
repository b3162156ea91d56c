#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# The two steps of tools/mkman.sh around the kernel's scripts/kernel-doc.
#
#   mkman.pl prep HEADER     HEADER for kernel-doc, on stdout
#   mkman.pl page PAGE DIR HEADER...
#                            PAGE (a section 3 page kernel-doc made),
#                            rewritten in place as a librmsg page; DIR holds
#                            every page, to link to those that exist; an
#                            enumeration's SYNOPSIS is its definition in
#                            the HEADERs (kernel-doc leaves the values out)
#
# kernel-doc knows the sections "Return:" and "Notes:" but not "Errors:" or
# "See also:", and it ends any section but the description at its first
# blank line (the next paragraph goes back to the description). So prep
# marks each blank line after a section's heading in a kernel-doc comment
# with a paragraph mark kernel-doc passes on as text; page turns the marks
# into paragraphs and the "Errors:" and "See also:" lines into sections,
# and puts the sections in the order of the man pages of C libraries:
# NAME, SYNOPSIS (with the #include line, and for a function the
# library to link), ARGUMENTS or MEMBERS, DESCRIPTION, RETURN VALUE,
# ERRORS, NOTES, SEE ALSO. SEE ALSO lists rmsg(7), the pages the page
# names (as NAME(3) in the text too) and those of its "See also:" line.
use strict;
use warnings;
use sort 'stable';

my $PARA = '[PP]';
my $SECT = qr/(Return|Returns|Errors|Notes?|See also)\s*:/;

sub prep {
	my ($file) = @_;
	my ($doc, $sect) = (0, 0);

	open(my $in, '<', $file) or die "mkman: $file: $!\n";
	while (<$in>) {
		if (m{^\s*/\*\*\s*$}) {
			($doc, $sect) = (1, 0);
		} elsif ($doc && m{\*/}) {
			$doc = 0;
		} elsif ($doc && /^\s*\*\s+$SECT/) {
			$sect = 1;
		} elsif ($doc && $sect && /^\s*\*\s*$/) {
			$_ = " * $PARA\n";
		}
		print;
	}
	close($in);
}

# Section names as kernel-doc writes them, and as the page has them.
my %rename = (
	'RETURN' => 'RETURN VALUE', 'RETURNS' => 'RETURN VALUE',
	'NOTE' => 'NOTES', 'MEMBERS' => 'MEMBERS', 'CONSTANTS' => 'CONSTANTS',
);
my @order = ('NAME', 'SYNOPSIS', 'ARGUMENTS', 'MEMBERS', 'CONSTANTS',
	     'DESCRIPTION', 'RETURN VALUE', 'ERRORS', 'NOTES');

# The definition of enum $name in @headers, without comments, as a SYNOPSIS.
sub enum_synopsis {
	my ($name, @headers) = @_;

	for my $h (@headers) {
		open(my $in, '<', $h) or die "mkman: $h: $!\n";
		local $/;
		my $text = <$in>;
		close($in);
		next unless $text =~ /^(enum $name \{.*?^\};)/ms;
		my @def = split(/\n/, $1);
		s{\s*/\*.*?\*/}{}g for @def;
		for (@def) {
			1 while s/\t+/' ' x (length($&) * 8 - length($`) % 8)/e;
		}
		return ['.nf', map({ s/\\/\\e/g; $_ } @def), '.fi'];
	}
	return;
}

sub page {
	my ($file, $dir, @headers) = @_;
	my (%body, @names, $th, $cur, $name);

	open(my $in, '<', $file) or die "mkman: $file: $!\n";
	my @lines = <$in>;
	close($in);
	chomp(@lines);
	$th = shift(@lines);
	($name = $file) =~ s{.*/|\.3$}{}g;
	for (@lines) {
		my $line = $_;

		if ($line =~ /^\.SH\s+"?([^"]*)"?\s*$/) {
			$cur = uc($1);
			$cur = $rename{$cur} // $cur;
		} elsif ($line =~ /^(Errors|See also|Notes?)\s*:\s*(.*)$/) {
			$cur = $1 eq 'Errors' ? 'ERRORS' :
			       $1 eq 'See also' ? 'SEE ALSO' : 'NOTES';
			push(@{$body{$cur}}, $2) if length($2);
			push(@names, $cur) unless grep { $_ eq $cur } @names;
			next;
		} else {
			$line = '.PP' if $line eq $PARA;
			push(@{$body{$cur}}, $line) if defined($cur);
			next;
		}
		push(@names, $cur) unless grep { $_ eq $cur } @names;
	}

	# f(void): kernel-doc lists "void" as its one argument.
	if (((($body{'ARGUMENTS'} // [])->[0]) // '') eq '.IP "void" 12') {
		delete($body{'ARGUMENTS'});
		@names = grep { $_ ne 'ARGUMENTS' } @names;
	}

	# Every function and structure with a page is NAME(3) in the text.
	my (%seen, @refs);
	my $ref = sub {
		my ($p) = @_;
		return $p if $p eq $name || !-e "$dir/$p.3";
		push(@refs, $p) unless $seen{$p}++;
		return $p;
	};
	for my $s (grep { $_ ne 'NAME' && $_ ne 'SYNOPSIS' } @names) {
		for (@{$body{$s}}) {
			s{\\fB(rmsg_\w+)\\fP(?!\()}{
				my $p = $1;
				-e "$dir/$p.3" && $p ne $name ?
					"\\fB" . $ref->($p) . "\\fP(3)" :
					"\\fB$p\\fP"}ge;
			s{\b(struct|enum) (rmsg_\w+)}{
				$ref->("$1_$2"); "$1 $2"}ge;
		}
	}

	# ERRORS: "-EXXX: why" (or "-EXXX, -EYYY: why") begins an entry.
	if ($body{'ERRORS'}) {
		my @e;
		for (@{$body{'ERRORS'}}) {
			if (/^(-E[A-Z0-9]+(?:,\s*-E[A-Z0-9]+)*):\s*(.*)$/) {
				my ($codes, $why) = ($1, $2);
				$codes =~ s/-/\\-/g;
				push(@e, '.TP', ".B $codes");
				push(@e, $why) if length($why);
			} else {
				push(@e, $_);
			}
		}
		$body{'ERRORS'} = \@e;
	}

	# SEE ALSO: the pages named, those of "See also:", and rmsg(7).
	my @also = map { "\\fB$_\\fP(3)" } sort @refs;
	for (@{$body{'SEE ALSO'} // []}) {
		for my $item (split(/\s*,\s*/, $_)) {
			$item =~ s/^\s+|[\s.]+$//g;
			next unless $item =~ /^\\?f?B?([\w.-]+?)(?:\\fP)?\((\d\w*)\)$/;
			my $t = "\\fB$1\\fP($2)";
			push(@also, $t) unless grep { $_ eq $t } @also;
		}
	}
	push(@also, '\fBrmsg\fP(7)') unless $name eq 'rmsg';
	$body{'SEE ALSO'} = [join(",\n", @also)];
	push(@names, 'SEE ALSO') unless grep { $_ eq 'SEE ALSO' } @names;

	# The #include line first; a function's library last.
	my $func = $name !~ /^(struct|enum)_/;
	$body{'SYNOPSIS'} = synopsis($body{'SYNOPSIS'}) if $func;
	if ($name =~ /^enum_(\w+)$/) {
		$body{'SYNOPSIS'} = enum_synopsis($1, @headers) //
				    $body{'SYNOPSIS'};
	}
	unshift(@{$body{'SYNOPSIS'}}, '.nf', '.B #include <rmsg.h>', '.fi',
		'.PP');
	push(@{$body{'SYNOPSIS'}}, '.PP', 'Link with \fI\-lrmsg\fP.') if $func;

	my %rank;
	@rank{@order} = (0 .. $#order);
	my @out = sort {
		($a eq 'SEE ALSO') <=> ($b eq 'SEE ALSO') ||
		($rank{$a} // @order) <=> ($rank{$b} // @order)
	} @names;
	open(my $o, '>', $file) or die "mkman: $file: $!\n";
	# No hyphens inside the names of calls and constants.
	print $o "$th\n.nh\n";
	for my $s (@out) {
		print $o ".SH \"$s\"\n";
		print $o "$_\n" for @{$body{$s}};
	}
	close($o);
}

#
# kernel-doc writes a prototype as .B "TYPE" NAME and one .BI "(PARAM " ","
# per parameter, which reads "int f (int a , int b );". The prototype as
# in the header instead, one line while it fits in 72 columns, else
# broken after a comma and indented to its parenthesis.
sub synopsis {
	my ($lines) = @_;
	my ($type, $fn, @params);

	for (@$lines) {
		if (/^\.B "([^"]*)" (\w+)$/) {
			($type, $fn) = ($1, $2);
		} elsif (/^\.BI "\(?(.*?) *" *"[,)];?"?$/) {
			push(@params, $1);
		} else {
			return $lines;
		}
	}
	return $lines unless defined($fn) && @params;
	my $head = $type =~ /\*$/ ? "$type$fn(" : "$type $fn(";
	my @out = ('.nf');
	my $line = $head;
	for my $i (0 .. $#params) {
		my $p = $params[$i] . ($i == $#params ? ');' : ',');
		if ($line ne $head && length($line) + 1 + length($p) > 72) {
			push(@out, ".B \"$line\"");
			$line = (' ' x length($head)) . $p;
		} else {
			$line .= ($line eq $head ? '' : ' ') . $p;
		}
	}
	push(@out, ".B \"$line\"", '.fi');
	return \@out;
}

my $cmd = shift(@ARGV) // '';
if ($cmd eq 'prep' && @ARGV == 1) {
	prep(@ARGV);
} elsif ($cmd eq 'page' && @ARGV >= 2) {
	page(@ARGV);
} else {
	die "usage: mkman.pl prep HEADER | page PAGE DIR HEADER...\n";
}
