# bash completion for fsbox (generated; do not edit)
_fsbox_valued() {
  case "$2" in --config|--format|--fields|--jq|--color|--timeout|--cursor) return 0 ;; esac
  case "$1 $2" in
    "cp --expect-sha256"|"cp --exclude"|"cp -E") return 0 ;;
    "cut --fields"|"cut -f"|"cut --delimiter"|"cut -d"|"cut --output-delimiter") return 0 ;;
    "edit --old"|"edit --new"|"edit --old-file"|"edit --new-file"|"edit --edits-json"|"edit --expect-count"|"edit --expect-sha256") return 0 ;;
    "find --max-depth"|"find --type"|"find -t"|"find --type-not"|"find -T"|"find --exclude"|"find -E"|"find --size"|"find -S"|"find --changed-within"|"find --changed-before"|"find --limit") return 0 ;;
    "grep --regexp"|"grep -e"|"grep --file"|"grep -f"|"grep --max-columns"|"grep --after-context"|"grep -A"|"grep --before-context"|"grep -B"|"grep --context"|"grep -C"|"grep --max-count"|"grep -m"|"grep --limit"|"grep --glob"|"grep -g"|"grep --type"|"grep -t"|"grep --type-not"|"grep -T") return 0 ;;
    "history --limit"|"history -n") return 0 ;;
    "links --prefix") return 0 ;;
    "ls --limit") return 0 ;;
    "mcp --profile"|"mcp --write"|"mcp --http") return 0 ;;
    "mv --expect-sha256") return 0 ;;
    "patch --patch"|"patch --patch-file"|"patch --strip"|"patch -p"|"patch --expect-sha256") return 0 ;;
    "read --offset"|"read --limit"|"read --max-bytes"|"read --encoding"|"read --if-none-match") return 0 ;;
    "rm --expect-sha256") return 0 ;;
    "slice --start"|"slice --end") return 0 ;;
    "sort --key"|"sort -k"|"sort --separator"|"sort -t") return 0 ;;
    "stat --check-file") return 0 ;;
    "write --content"|"write --expect-sha256"|"write --mode") return 0 ;;
  esac
  return 1
}
_fsbox() {
  local cur prev cmd w i npos=0 skip=0
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  cmd=""
  w="${COMP_WORDS[0]##*/}"
  case "$w" in fsbox-*) cmd="${w#fsbox-}" ;; esac
  for ((i=1; i<COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    case "$w" in
      --*=*) ;;
      -*) _fsbox_valued "$cmd" "$w" && skip=1 ;;
      *) if [ -z "$cmd" ]; then cmd="$w"; else npos=$((npos+1)); fi ;;
    esac
  done
  if ((skip)); then
    case "$prev" in
      --config) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      --format) COMPREPLY=( $(compgen -W "json ndjson text" -- "$cur") ); return ;;
      --fields) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      --jq) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      --color) COMPREPLY=( $(compgen -W "auto always never" -- "$cur") ); return ;;
      --timeout) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      --cursor) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
    esac
    case "$cmd $prev" in
      "cp --expect-sha256") COMPREPLY=(); return ;;
      "cp --exclude"|"cp -E") COMPREPLY=(); return ;;
      "cut --fields"|"cut -f") COMPREPLY=(); return ;;
      "cut --delimiter"|"cut -d") COMPREPLY=(); return ;;
      "cut --output-delimiter") COMPREPLY=(); return ;;
      "edit --old") COMPREPLY=(); return ;;
      "edit --new") COMPREPLY=(); return ;;
      "edit --old-file") COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      "edit --new-file") COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      "edit --edits-json") COMPREPLY=(); return ;;
      "edit --expect-count") COMPREPLY=(); return ;;
      "edit --expect-sha256") COMPREPLY=(); return ;;
      "find --max-depth") COMPREPLY=(); return ;;
      "find --type"|"find -t") COMPREPLY=( $(compgen -W "f d l agda asciidoc asm awk bazel c clojure cmake config cpp cs css csv cython dart diff docker elisp elixir erb erlang fish fortran go gradle groovy h haskell hs html java jinja js json jsonl julia jupyter kotlin less license lisp lock log lua m4 make man markdown matlab md meson minified nim nix objc objcpp ocaml pascal perl php po protobuf ps py r readme rst ruby rust sass scala sh sql svg swift systemd tcl tex tf toml ts txt vala vb verilog vhdl vim xml yacc yaml zig zsh" -- "$cur") ); return ;;
      "find --type-not"|"find -T") COMPREPLY=( $(compgen -W "f d l agda asciidoc asm awk bazel c clojure cmake config cpp cs css csv cython dart diff docker elisp elixir erb erlang fish fortran go gradle groovy h haskell hs html java jinja js json jsonl julia jupyter kotlin less license lisp lock log lua m4 make man markdown matlab md meson minified nim nix objc objcpp ocaml pascal perl php po protobuf ps py r readme rst ruby rust sass scala sh sql svg swift systemd tcl tex tf toml ts txt vala vb verilog vhdl vim xml yacc yaml zig zsh" -- "$cur") ); return ;;
      "find --exclude"|"find -E") COMPREPLY=(); return ;;
      "find --size"|"find -S") COMPREPLY=(); return ;;
      "find --changed-within") COMPREPLY=(); return ;;
      "find --changed-before") COMPREPLY=(); return ;;
      "find --limit") COMPREPLY=(); return ;;
      "grep --regexp"|"grep -e") COMPREPLY=(); return ;;
      "grep --file"|"grep -f") COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      "grep --max-columns") COMPREPLY=(); return ;;
      "grep --after-context"|"grep -A") COMPREPLY=(); return ;;
      "grep --before-context"|"grep -B") COMPREPLY=(); return ;;
      "grep --context"|"grep -C") COMPREPLY=(); return ;;
      "grep --max-count"|"grep -m") COMPREPLY=(); return ;;
      "grep --limit") COMPREPLY=(); return ;;
      "grep --glob"|"grep -g") COMPREPLY=(); return ;;
      "grep --type"|"grep -t") COMPREPLY=( $(compgen -W "agda asciidoc asm awk bazel c clojure cmake config cpp cs css csv cython d dart diff docker elisp elixir erb erlang fish fortran go gradle groovy h haskell hs html java jinja js json jsonl julia jupyter kotlin less license lisp lock log lua m4 make man markdown matlab md meson minified nim nix objc objcpp ocaml pascal perl php po protobuf ps py r readme rst ruby rust sass scala sh sql svg swift systemd tcl tex tf toml ts txt vala vb verilog vhdl vim xml yacc yaml zig zsh" -- "$cur") ); return ;;
      "grep --type-not"|"grep -T") COMPREPLY=( $(compgen -W "agda asciidoc asm awk bazel c clojure cmake config cpp cs css csv cython d dart diff docker elisp elixir erb erlang fish fortran go gradle groovy h haskell hs html java jinja js json jsonl julia jupyter kotlin less license lisp lock log lua m4 make man markdown matlab md meson minified nim nix objc objcpp ocaml pascal perl php po protobuf ps py r readme rst ruby rust sass scala sh sql svg swift systemd tcl tex tf toml ts txt vala vb verilog vhdl vim xml yacc yaml zig zsh" -- "$cur") ); return ;;
      "history --limit"|"history -n") COMPREPLY=(); return ;;
      "links --prefix") COMPREPLY=(); return ;;
      "ls --limit") COMPREPLY=(); return ;;
      "mcp --profile") COMPREPLY=( $(compgen -W "native reference" -- "$cur") ); return ;;
      "mcp --write") COMPREPLY=(); return ;;
      "mcp --http") COMPREPLY=(); return ;;
      "mv --expect-sha256") COMPREPLY=(); return ;;
      "patch --patch") COMPREPLY=(); return ;;
      "patch --patch-file") COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      "patch --strip"|"patch -p") COMPREPLY=(); return ;;
      "patch --expect-sha256") COMPREPLY=(); return ;;
      "read --offset") COMPREPLY=(); return ;;
      "read --limit") COMPREPLY=(); return ;;
      "read --max-bytes") COMPREPLY=(); return ;;
      "read --encoding") COMPREPLY=( $(compgen -W "utf-8 base64" -- "$cur") ); return ;;
      "read --if-none-match") COMPREPLY=(); return ;;
      "rm --expect-sha256") COMPREPLY=(); return ;;
      "sort --key"|"sort -k") COMPREPLY=(); return ;;
      "sort --separator"|"sort -t") COMPREPLY=(); return ;;
      "stat --check-file") COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      "write --content") COMPREPLY=(); return ;;
      "write --expect-sha256") COMPREPLY=(); return ;;
      "write --mode") COMPREPLY=(); return ;;
    esac
    COMPREPLY=(); return
  fi
  if [ -z "$cmd" ]; then
    COMPREPLY=( $(compgen -W "completion cp cut edit explain find grep history links ls man mcp mkdir mv patch purge read rm roots slice sort stat store tools undo wc write --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") )
    return
  fi
  case "$cmd" in
    completion)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -W "bash zsh fish" -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    cp)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--exclude --expect-sha256 --force --recursive -E -f -r --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        1) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    cut)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--csv --delimiter --fields --only-delimited --output-delimiter --regex -d -f -s --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    edit)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--all --dry-run --edits-json --expect-count --expect-sha256 --loose-indent --new --new-file --old --old-file --sequential --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    explain)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -W "completion cp cut edit explain find grep history links ls man mcp mkdir mv patch purge read rm roots slice sort stat store tools undo wc write" -- "$cur") ) ;;
        1) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    find)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--changed-before --changed-within --exclude --follow --hidden --limit --long --max-depth --no-ignore --no-require-git --null --size --type --type-list --type-not -0 -E -L -S -T -l -t --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -d -- "$cur") ) ;;
        1) COMPREPLY=() ;;
        *) COMPREPLY=() ;;
      esac ;;
    grep)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--after-context --before-context --context --count --dereference-recursive --extended-regexp --file --files-with-matches --fixed-strings --follow --glob --hidden --ignore-case --invert-match --limit --line-number --line-regexp --max-columns --max-count --no-filename --no-ignore --no-require-git --null --numbered --only-matching --quiet --recursive --regexp --text --type --type-list --type-not --with-filename --word-regexp -0 -A -B -C -E -F -H -L -R -T -a -c -e -f -g -h -i -l -m -n -o -q -r -t -v -w -x --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=() ;;
        *) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    history)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--limit -n --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    links)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--prefix --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -d -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    ls)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--all --limit -a --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -d -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    man)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -W "completion cp cut edit explain find grep history links ls man mcp mkdir mv patch purge read rm roots slice sort stat store tools undo wc write" -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    mcp)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--http --profile --write --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        *) COMPREPLY=( $(compgen -d -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    mkdir)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--parents -p --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -d -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    mv)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--expect-sha256 --force -f --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        1) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    patch)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--dry-run --expect-sha256 --patch --patch-file --strip -p --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        *) COMPREPLY=() ;;
      esac ;;
    purge)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        *) COMPREPLY=() ;;
      esac ;;
    read)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--encoding --if-none-match --limit --max-bytes --offset --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    rm)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--expect-sha256 --recursive -r --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    roots)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        *) COMPREPLY=() ;;
      esac ;;
    slice)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--end --start --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        1) COMPREPLY=() ;;
        2) COMPREPLY=() ;;
        *) COMPREPLY=() ;;
      esac ;;
    sort)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--human-numeric --ignore-case --key --numeric --reverse --separator --stable --unique -f -h -k -n -r -s -t -u --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    stat)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--check --check-file --sha256 --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    store)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -W "check" -- "$cur") ) ;;
        1) COMPREPLY=() ;;
        *) COMPREPLY=() ;;
      esac ;;
    tools)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        *) COMPREPLY=() ;;
      esac ;;
    undo)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--force -f --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=() ;;
        *) COMPREPLY=() ;;
      esac ;;
    wc)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--bytes --chars --lines --words -c -l -m -w --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        *) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
    write)
      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "--append --content --expect-absent --expect-sha256 --mode --no-clobber --help --config --format --pretty --fields --jq --color --timeout --cursor --version --help" -- "$cur") ); return; fi
      case $npos in
        0) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        *) COMPREPLY=() ;;
      esac ;;
  esac
}
complete -o filenames -F _fsbox fsbox
complete -o filenames -F _fsbox fsbox-completion
complete -o filenames -F _fsbox fsbox-cp
complete -o filenames -F _fsbox fsbox-cut
complete -o filenames -F _fsbox fsbox-edit
complete -o filenames -F _fsbox fsbox-explain
complete -o filenames -F _fsbox fsbox-find
complete -o filenames -F _fsbox fsbox-grep
complete -o filenames -F _fsbox fsbox-history
complete -o filenames -F _fsbox fsbox-links
complete -o filenames -F _fsbox fsbox-ls
complete -o filenames -F _fsbox fsbox-man
complete -o filenames -F _fsbox fsbox-mcp
complete -o filenames -F _fsbox fsbox-mkdir
complete -o filenames -F _fsbox fsbox-mv
complete -o filenames -F _fsbox fsbox-patch
complete -o filenames -F _fsbox fsbox-purge
complete -o filenames -F _fsbox fsbox-read
complete -o filenames -F _fsbox fsbox-rm
complete -o filenames -F _fsbox fsbox-roots
complete -o filenames -F _fsbox fsbox-slice
complete -o filenames -F _fsbox fsbox-sort
complete -o filenames -F _fsbox fsbox-stat
complete -o filenames -F _fsbox fsbox-store
complete -o filenames -F _fsbox fsbox-tools
complete -o filenames -F _fsbox fsbox-undo
complete -o filenames -F _fsbox fsbox-wc
complete -o filenames -F _fsbox fsbox-write
