# bash completion for fsbox (generated; do not edit)
_fsbox() {
  local cur cmd i
  cur="${COMP_WORDS[COMP_CWORD]}"
  cmd=""
  case "${COMP_WORDS[0]##*/}" in fsbox-*) cmd="${COMP_WORDS[0]##*/fsbox-}"; cmd="${cmd#fsbox-}" ;; esac
  for ((i=1; i<COMP_CWORD; i++)); do case "${COMP_WORDS[i]}" in -*) ;; *) [ -z "$cmd" ] && cmd="${COMP_WORDS[i]}" ;; esac; done
  if [ -z "$cmd" ]; then
    COMPREPLY=( $(compgen -W "completion cp cut edit explain find grep links ls man mkdir mv read rm roots slice sort stat tools wc write --config --format --pretty --color --version --help" -- "$cur") )
    return
  fi
  case "$cmd" in
    completion) COMPREPLY=( $(compgen -W " --config --format --pretty --color --version --help" -- "$cur") ) ;;
    cp) COMPREPLY=( $(compgen -W "--force -f --config --format --pretty --color --version --help" -- "$cur") ) ;;
    cut) COMPREPLY=( $(compgen -W "--csv --delimiter --fields --only-delimited --output-delimiter --regex -d -f -s --config --format --pretty --color --version --help" -- "$cur") ) ;;
    edit) COMPREPLY=( $(compgen -W "--all --dry-run --edits-json --expect-sha256 --new --new-file --old --old-file --config --format --pretty --color --version --help" -- "$cur") ) ;;
    explain) COMPREPLY=( $(compgen -W " --config --format --pretty --color --version --help" -- "$cur") ) ;;
    find) COMPREPLY=( $(compgen -W "--exclude --follow --hidden --max-depth --no-ignore --type -E -L -t --config --format --pretty --color --version --help" -- "$cur") ) ;;
    grep) COMPREPLY=( $(compgen -W "--after-context --before-context --context --count --files-with-matches --fixed-strings --follow --glob --hidden --ignore-case --invert-match --limit --line-number --max-count --no-ignore --numbered --word-regexp -A -B -C -F -L -c -g -i -l -m -n -v -w --config --format --pretty --color --version --help" -- "$cur") ) ;;
    links) COMPREPLY=( $(compgen -W "--prefix --config --format --pretty --color --version --help" -- "$cur") ) ;;
    ls) COMPREPLY=( $(compgen -W "--all -a --config --format --pretty --color --version --help" -- "$cur") ) ;;
    man) COMPREPLY=( $(compgen -W " --config --format --pretty --color --version --help" -- "$cur") ) ;;
    mkdir) COMPREPLY=( $(compgen -W " --config --format --pretty --color --version --help" -- "$cur") ) ;;
    mv) COMPREPLY=( $(compgen -W "--force -f --config --format --pretty --color --version --help" -- "$cur") ) ;;
    read) COMPREPLY=( $(compgen -W "--encoding --limit --max-bytes --offset --config --format --pretty --color --version --help" -- "$cur") ) ;;
    rm) COMPREPLY=( $(compgen -W "--recursive -r --config --format --pretty --color --version --help" -- "$cur") ) ;;
    roots) COMPREPLY=( $(compgen -W " --config --format --pretty --color --version --help" -- "$cur") ) ;;
    slice) COMPREPLY=( $(compgen -W "--end --start --config --format --pretty --color --version --help" -- "$cur") ) ;;
    sort) COMPREPLY=( $(compgen -W "--ignore-case --key --numeric --reverse --separator --unique -f -k -n -r -t -u --config --format --pretty --color --version --help" -- "$cur") ) ;;
    stat) COMPREPLY=( $(compgen -W "--sha256 --config --format --pretty --color --version --help" -- "$cur") ) ;;
    tools) COMPREPLY=( $(compgen -W " --config --format --pretty --color --version --help" -- "$cur") ) ;;
    wc) COMPREPLY=( $(compgen -W " --config --format --pretty --color --version --help" -- "$cur") ) ;;
    write) COMPREPLY=( $(compgen -W "--append --content --expect-sha256 --mode --no-clobber --config --format --pretty --color --version --help" -- "$cur") ) ;;
  esac
  if [[ "$cur" != -* ]]; then COMPREPLY+=( $(compgen -f -- "$cur") ); fi
}
complete -o filenames -F _fsbox fsbox
complete -o filenames -F _fsbox fsbox-completion
complete -o filenames -F _fsbox fsbox-cp
complete -o filenames -F _fsbox fsbox-cut
complete -o filenames -F _fsbox fsbox-edit
complete -o filenames -F _fsbox fsbox-explain
complete -o filenames -F _fsbox fsbox-find
complete -o filenames -F _fsbox fsbox-grep
complete -o filenames -F _fsbox fsbox-links
complete -o filenames -F _fsbox fsbox-ls
complete -o filenames -F _fsbox fsbox-man
complete -o filenames -F _fsbox fsbox-mkdir
complete -o filenames -F _fsbox fsbox-mv
complete -o filenames -F _fsbox fsbox-read
complete -o filenames -F _fsbox fsbox-rm
complete -o filenames -F _fsbox fsbox-roots
complete -o filenames -F _fsbox fsbox-slice
complete -o filenames -F _fsbox fsbox-sort
complete -o filenames -F _fsbox fsbox-stat
complete -o filenames -F _fsbox fsbox-tools
complete -o filenames -F _fsbox fsbox-wc
complete -o filenames -F _fsbox fsbox-write
