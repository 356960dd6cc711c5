#!/bin/bash
# The bash completion (completion/wss) against the command: the function is
# called as bash calls it (COMP_WORDS, COMP_CWORD) and must offer every
# subcommand of `wss --help`, each subcommand's flags as its usage lines
# give them, the values those lines list for --backend, --mode,
# --time-base, --by and --policy, profiles and session files by extension,
# and commands after `wss run --`.  Run twice: on its own, and with
# Debian's bash-completion loaded (its _filedir and _command_offset), when
# installed.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # run by $(SHELL), which may be dash
. "$top_srcdir/tests/tap/tap.sh"
comp=${WSS_COMPLETION:-$top_srcdir/completion/wss}
[ -f "$comp" ] || bail "$comp not found"
"$WSS" --help >"$TMP/help" || bail "wss --help failed"

# complete WORD...: what completing the last word offers, one per line.
complete_words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_wss wss "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	[ ${#COMPREPLY[@]} -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}" | sed 's:/$::' | sort -u
}
offers() { # offers WANT WORD...: WANT among the offers
	local want=$1
	shift
	complete_words "$@" | grep -qxF -- "$want"
}

# From the usage: the subcommands, the flags of each, the listed values.
subcmds=$(awk '/^(usage:)? +wss [a-z]/ { sub(/^usage:/, ""); print $2 }' "$TMP/help" | sort -u)
awk '/^(usage:)? +wss [a-z]/ { sub(/^usage:/, ""); cmd = $2 }
     /^ +(wss [a-z]|[[])/ && cmd != "" {
	for (i = 1; i <= NF; i++) if (match($i, /^[[(]?--?[a-z][-a-z]*/)) {
		f = substr($i, RSTART, RLENGTH); sub(/^[[(]/, "", f); print cmd, f }
     }
     /^$/ { cmd = "" }' "$TMP/help" | sort -u >"$TMP/bycmd"
grep -oE '\[--[a-z-]+ [a-z-]+([|,][a-z-]+)+\]' "$TMP/help" | tr -d '[]' | sort -u >"$TMP/values"
[ "$(echo "$subcmds" | wc -w)" -ge 8 ] && [ "$(wc -l <"$TMP/bycmd")" -ge 20 ] &&
	[ "$(wc -l <"$TMP/values")" -ge 5 ] || bail "the usage of wss --help did not parse"

mkdir "$TMP/d" "$TMP/dir.jsonl.d" && touch "$TMP/a.jsonl" "$TMP/b.toml" "$TMP/c.txt" || bail "fixture files"
cd "$TMP" || bail "cd $TMP"

checks() { # checks MODE
	local m=$1 cmd f opt vals v
	for cmd in $subcmds; do
		offers "$cmd" wss ""
		ok $? "$m: wss <TAB> offers $cmd"
	done
	while read -r cmd f; do
		offers "$f" wss "$cmd" "-"
		ok $? "$m: wss $cmd -<TAB> offers $f"
	done <"$TMP/bycmd"
	for cmd in heatmap window mrc simulate; do
		offers --csv wss "$cmd" "--" && offers --json wss "$cmd" "--"
		ok $? "$m: wss $cmd --<TAB> offers --csv and --json"
	done
	offers --trace wss run --tr && ! offers --trace wss report --
	ok $? "$m: flags are per subcommand (--trace for run, not for report)"
	while read -r opt vals; do
		want=$(echo "$vals" | tr '|,' '\n\n' | sort)
		got=$(complete_words wss "$(grep -m1 "^[a-z]* $opt\$" "$TMP/bycmd" | cut -d' ' -f1)" "$opt" "")
		is "$got" "$want" "$m: $opt <TAB> offers $(echo $want)"
	done <"$TMP/values"
	is "$(complete_words wss run --mode = ex)" exact "$m: --mode=ex<TAB> (bash splits at =) gives exact"
	is "$(complete_words wss run --backend h)" hybrid "$m: --backend h<TAB> gives hybrid"
	is "$(complete_words wss export --format "" | tr '\n' ' ')" "csv jsonl perfetto pprof table " "$m: wss export --format <TAB> offers the formats"
	is "$(complete_words wss simulate --policy fifo,l)" "fifo,lru" "$m: --policy fifo,l<TAB> completes the list's last element"
	is "$(complete_words wss report "")" "$(printf 'a.jsonl\nd\ndir.jsonl.d')" "$m: wss report <TAB> offers profiles (*.jsonl) and directories"
	is "$(complete_words wss mrc --no-opt "")" "$(printf 'a.jsonl\nd\ndir.jsonl.d')" "$m: wss mrc --no-opt <TAB> too"
	is "$(complete_words wss run -c "")" "$(printf 'b.toml\nd\ndir.jsonl.d')" "$m: wss run -c <TAB> offers session files (*.toml)"
	is "$(complete_words wss config check "")" "$(printf 'b.toml\nd\ndir.jsonl.d')" "$m: wss config check <TAB> offers session files"
	is "$(complete_words wss config "")" "$(printf 'check\nexample')" "$m: wss config <TAB> offers check and example"
	is "$(complete_words wss run --interval "")" "" "$m: wss run --interval <TAB> offers nothing"
	offers true wss run --mode exact -- tru
	ok $? "$m: wss run --mode exact -- tru<TAB> offers the command true"
	offers true wss run --backend = mprotect tru
	ok $? "$m: wss run --backend=mprotect tru<TAB> offers true (the program without --)"
	offers c.txt wss run -- cat ""
	ok $? "$m: wss run -- cat <TAB> completes cat's arguments (files)"
	! offers --interval wss run -- ./prog -
	ok $? "$m: wss run -- ./prog -<TAB> offers no wss flag"
}

. "$comp"
complete -p wss 2>/dev/null | grep -q -- '-F _wss wss$'
ok $? "sourcing it registers _wss for wss"
checks plain
bc=/usr/share/bash-completion/bash_completion
if [ -f "$bc" ]; then
	. "$bc" >/dev/null 2>&1
	. "$comp"
	declare -F _filedir >/dev/null && declare -F _command_offset >/dev/null
	ok $? "bash-completion loaded (_filedir, _command_offset)"
	checks bash-completion
else
	skip "bash-completion not installed ($bc): apt-get install bash-completion"
fi
done_testing
