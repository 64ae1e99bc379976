# fsarena built-in: listdirs (lists the directories of a tree of empty files; filebench's defaults).
set $dir=/tmp
set $nfiles=50000
set $meandirwidth=5
set $nthreads=16

define fileset name=bigfileset,path=$dir,size=0,entries=$nfiles,dirwidth=$meandirwidth,prealloc

define process name=lsdir,instances=1
{
  thread name=lsdirthread,memsize=1m,instances=$nthreads
  {
    flowop listdir name=open1,filesetname=bigfileset
  }
}
