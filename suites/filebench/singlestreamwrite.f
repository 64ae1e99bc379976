# fsarena built-in: singlestreamwrite (sequential writes to one growing file; filebench's defaults).
set $dir=/tmp
set $iosize=1m
set $nthreads=1

define file name=largefile1,path=$dir,prealloc

define process name=seqwrite,instances=1
{
  thread name=seqwritethread,memsize=10m,instances=$nthreads
  {
    flowop write name=seqwrite,filename=largefile1,iosize=$iosize
  }
}
