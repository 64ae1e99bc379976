# fsarena built-in: removedirs (removes leaf directories until none is left; filebench's defaults).
set $dir=/tmp
set $ndirs=10000
set $meandirwidth=100
set $nthreads=16
set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=0,leafdirs=$ndirs,dirwidth=$meandirwidth,prealloc

define process name=remdir,instances=1
{
  thread name=remdirthread,memsize=1m,instances=$nthreads
  {
    flowop removedir name=dirremover,filesetname=bigfileset
  }
}
